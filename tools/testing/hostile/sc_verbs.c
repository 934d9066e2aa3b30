// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "hostile.h"
int sc_verbs(void) { return 0; }
