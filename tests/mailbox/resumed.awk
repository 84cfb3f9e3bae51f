# the rows ResumedbyP1 must have, from the program's own log
$2 == "SEND" && $3 == "P1" { if (!($4 in p1)) p1[$4] = $1 }
$2 == "WAIT" { open[$3] = $4 }
$2 == "WAKE" { delete open[$3]; if (($4 in p1) && p1[$4] < $1) print $3 }
$2 == "EXIT" { for (p in open) if ((open[p] in p1)) print p }
