#include <cairo.h>
#include <pango/pangocairo.h>
// Font files an effect ships: fontconfig reads their family and adds them to the process's
// fonts; Pango's fontconfig font maps are told the set changed.
#include <fontconfig/fontconfig.h>
#include <pango/pangofc-fontmap.h>
