-- Each user's dashboard preferences (a JSON object, `{}`: the defaults).

ALTER TABLE users ADD COLUMN preferences text NOT NULL DEFAULT '{}';
