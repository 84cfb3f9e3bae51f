-- ResumedbyP1 as a DuckDB user tunes it: a W ends after some send of P1
-- to its mailbox exactly when it ends after P1's first send there, so the
-- sends shrink to one row per mailbox before the join (the plain join of
-- resumedbyp1.sql pairs every wait with every send of P1 to its mailbox).
SELECT DISTINCT W.Process, W.valid_to
FROM Waiting AS W
JOIN (SELECT Mailbox, min(valid_at) AS first_send FROM SendMessage WHERE Process = 'P1' GROUP BY Mailbox) AS S
  ON S.Mailbox = W.Mailbox
WHERE S.first_send < W.valid_to
ORDER BY 2, 1;
