-- A lead with Meta's raw click id (`attributionData.fbclid`) has Meta's click as one with
-- its cookie (`fbc`) has: `fbc[exists]` finds both (issue #50). The facets' update trigger
-- moves their counts.
UPDATE leads SET has_fbc = true
WHERE NOT has_fbc
  AND jsonb_typeof(data::jsonb #> '{attributionData,fbclid}') = 'string'
  AND btrim(data::jsonb #>> '{attributionData,fbclid}') <> '';
