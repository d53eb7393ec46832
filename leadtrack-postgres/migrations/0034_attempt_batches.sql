-- The batched request an attempt went out in (issue #51 §3): its id and how many
-- conversions it carried, the same for every attempt made in it. NULL for an attempt that
-- sent no batch, and for attempts recorded before batches.
ALTER TABLE attempts ADD COLUMN batch_id uuid, ADD COLUMN batch_size integer;
