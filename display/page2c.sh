#!/bin/sh
# page2c.sh - turns display/page.html into a C file that defines the string
# dspPageHtml (run by the Makefile into build/gen/page.c; never committed).
echo "/* generated from $1 by display/page2c.sh */"
echo "const char dspPageHtml[] ="
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/  "/' -e 's/$/\\n"/' "$1"
echo '  "";'
