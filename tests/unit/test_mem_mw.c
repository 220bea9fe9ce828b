/* SPDX-License-Identifier: BSD-3-Clause */
#include <criterion/criterion.h>

Test(mem_mw, placeholder) {}
