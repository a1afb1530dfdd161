// The target's code is all inline in include/CSystem.h; SwiftPM needs one source file.
#include "CSystem.h"
