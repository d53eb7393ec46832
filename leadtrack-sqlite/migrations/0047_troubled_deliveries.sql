-- The deliveries that need someone to look (issue #50): failed for good, or failed and
-- waiting to be tried again (`Delivery::is_troubled`), for the inbox's "Needs attention".
-- Partial, so it holds only those few.
CREATE INDEX deliveries_troubled ON deliveries (job_id)
WHERE state = 'failed' OR (state = 'pending' AND attempts > 0);
