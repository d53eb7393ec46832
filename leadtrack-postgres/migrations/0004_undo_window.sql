-- The undo window of dashboard ratings, per project.

ALTER TABLE projects ADD COLUMN undo_window_seconds integer NOT NULL DEFAULT 10;
