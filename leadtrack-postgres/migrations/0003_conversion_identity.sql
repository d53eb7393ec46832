-- One identity per conversion: each job carries its conversion's id and the time of its first
-- rating (a job from before is its own conversion), and each delivery what it does at its
-- platform.

ALTER TABLE jobs ADD COLUMN conversion_event_id uuid;
ALTER TABLE jobs ADD COLUMN converted_at bigint;
UPDATE jobs SET conversion_event_id = event_id, converted_at = created_at;
ALTER TABLE jobs ALTER COLUMN conversion_event_id SET NOT NULL;
ALTER TABLE jobs ALTER COLUMN converted_at SET NOT NULL;
ALTER TABLE deliveries ADD COLUMN action text NOT NULL DEFAULT 'send';
