#!/bin/sh
# page2c.sh - turns an HTML page into a C file that defines it as a string:
# display/page.html into dspPageHtml (build/gen/page.c), app/flame.html into
# appFlameHtml (build/gen/flame.c), run by the Makefile; never committed.
#   sh display/page2c.sh FILE.html [NAME]      (NAME: dspPageHtml)
echo "/* generated from $1 by display/page2c.sh */"
echo "const char ${2:-dspPageHtml}[] ="
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$/\\n"/' "$1"
echo '  "";'
