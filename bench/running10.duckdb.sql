-- RunningOnEvery10Seconds as a DuckDB user writes it: no join at all; each
-- RunningOn interval lists the Clock[10] ticks it holds (multiples of 10 s
-- from the first time of the recording; an interval still open at the end
-- holds up to the last time) with range() and unnest.
WITH span AS (
  SELECT min(lo) AS lo, max(hi) AS hi FROM (
    SELECT min(valid_from) AS lo, max(coalesce(valid_to, valid_from)) AS hi FROM Processor UNION ALL
    SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Process UNION ALL
    SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Mailbox UNION ALL
    SELECT min(valid_at), max(valid_at) FROM SendMessage UNION ALL
    SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM RunningOn UNION ALL
    SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Waiting))
SELECT DISTINCT Process, Processor, t
FROM (
  SELECT RO.Process, RO.Processor,
         unnest(range(greatest((RO.valid_from + 9999999999) // 10000000000,
                               (span.lo + 9999999999) // 10000000000) * 10000000000,
                      coalesce(RO.valid_to, span.hi + 1), 10000000000)) AS t
  FROM RunningOn AS RO, span)
ORDER BY 3, 1, 2;
