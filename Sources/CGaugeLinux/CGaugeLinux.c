#include "CGaugeLinux.h"
