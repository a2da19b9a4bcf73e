#include "counters/roofline_svg.hpp"
