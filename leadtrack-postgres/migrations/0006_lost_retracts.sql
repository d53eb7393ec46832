-- A `lost` job remembers the label conversions it withdraws.

ALTER TABLE jobs ADD COLUMN retracts text;
