-- Whether a member may export the project's leads (owners may; members once an owner allows
-- it, which none is yet).

ALTER TABLE members ADD COLUMN can_export boolean NOT NULL DEFAULT false;
