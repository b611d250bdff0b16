/* coredump.h - keeping the programs' memory off the disk: each program holds
 * API keys (its own, or the keys file's), and a core dump would write them
 * wherever the machine's core_pattern says (issue 22). */
#ifndef PS_COREDUMP_H
#define PS_COREDUMP_H

/* Turns core dumps off for this process, first thing in main: RLIMIT_CORE
 * to 0 (soft and hard, so no child raises it again) and, outside sanitizer
 * builds, prctl(PR_SET_DUMPABLE, 0), which also stops a core_pattern pipe
 * (systemd-coredump, apport) that ignores the limit. Sanitizer builds keep
 * the process dumpable: LeakSanitizer ptraces it (it sets RLIMIT_CORE 0
 * itself). Never fails the program: returns 0, or -1 when a step was
 * refused (nothing to do about it). */
int ps_coredump_disable(void);

#endif
