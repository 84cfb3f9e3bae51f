-- ResumedbyP1 the traditional way: over the tables of `tqmon load`.
-- S precede end of W on spans: end(S) = valid_at + 1 <= valid_to.  A W still
-- open at the end (valid_to NULL) has no end, so no result.  Results are sets.
SELECT DISTINCT W.Process, W.valid_to
FROM Waiting AS W JOIN SendMessage AS S ON S.Mailbox = W.Mailbox
WHERE S.Process = 'P1' AND W.valid_to IS NOT NULL AND S.valid_at < W.valid_to
ORDER BY 2, 1;
