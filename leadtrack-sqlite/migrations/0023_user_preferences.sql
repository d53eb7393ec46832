-- Each user's dashboard preferences (a JSON object, `{}`: the defaults).

ALTER TABLE users ADD COLUMN preferences TEXT NOT NULL DEFAULT '{}';
