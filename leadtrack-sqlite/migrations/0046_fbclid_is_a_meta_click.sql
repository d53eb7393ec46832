-- A lead with Meta's raw click id (`attributionData.fbclid`) has Meta's click as one with
-- its cookie (`fbc`) has: `fbc[exists]` finds both (issue #50). The facets' update trigger
-- moves their counts.
UPDATE leads SET has_fbc = 1
WHERE has_fbc = 0
  AND json_type(data, '$.attributionData.fbclid') = 'text'
  AND trim(json_extract(data, '$.attributionData.fbclid')) <> '';
