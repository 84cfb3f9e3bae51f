-- RunningOnEvery10Seconds the traditional way: Clock[10] ticks (multiples of
-- 10 s between the first and last time of the recording) from a recursive
-- CTE, joined with the RunningOn intervals that hold at the tick
-- (valid_from <= tick < valid_to; NULL valid_to = still open).
WITH RECURSIVE
  span(lo, hi) AS (
    SELECT min(lo), max(hi) FROM (
      SELECT min(valid_from) AS lo, max(coalesce(valid_to, valid_from)) AS hi FROM Processor UNION ALL
      SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Process UNION ALL
      SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Mailbox UNION ALL
      SELECT min(valid_at), max(valid_at) FROM SendMessage UNION ALL
      SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM RunningOn UNION ALL
      SELECT min(valid_from), max(coalesce(valid_to, valid_from)) FROM Waiting)),
  tick(t) AS (
    SELECT ((lo + 9999999999) / 10000000000) * 10000000000 FROM span
    UNION ALL
    SELECT t + 10000000000 FROM tick, span WHERE t + 10000000000 <= hi)
SELECT DISTINCT RO.Process, RO.Processor, tick.t
FROM tick JOIN RunningOn AS RO
  ON RO.valid_from <= tick.t AND (RO.valid_to IS NULL OR tick.t < RO.valid_to)
ORDER BY 3, 1, 2;
