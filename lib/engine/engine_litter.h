/* SPDX-License-Identifier: BSD-3-Clause */
/* Runtime folders left behind by droce processes that are gone. */
#ifndef DROCE_ENGINE_LITTER_H
#define DROCE_ENGINE_LITTER_H

/**
 * Remove, under the EAL runtime base @p base (the folder holding one folder per file prefix),
 * each folder named exactly droce-<pid> whose process no longer exists, with what it holds.
 * Symbolic links are never followed nor removed; folders of live processes, of other
 * prefixes and of other users stay, and so does a folder whose config file a process holds
 * the EAL's lock on (a process of another pid namespace). A pid reused by an unrelated live process
 * keeps its folder until that process is gone too.
 *
 * @return the number of folders removed (0 when @p base does not exist), or -errno when
 *         @p base cannot be read.
 */
int engine_litter_clean(const char *base);

#endif /* DROCE_ENGINE_LITTER_H */
