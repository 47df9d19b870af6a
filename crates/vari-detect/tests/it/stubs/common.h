/* Shared helpers for vari's stub driver libraries (tests only).
 * Each stub's behaviour is chosen by environment variables read at call time. */
#ifndef VARI_STUB_COMMON_H
#define VARI_STUB_COMMON_H
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STUB_HELPER static __attribute__((unused))

STUB_HELPER const char *stub_env(const char *name) {
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

STUB_HELPER int stub_env_int(const char *name, int fallback) {
    const char *v = stub_env(name);
    return v ? (int)strtol(v, NULL, 0) : fallback;
}

/* STUB_MISBEHAVE=<call>:<hang|abort|segv>: misbehave when <call> is reached. */
STUB_HELPER void stub_misbehave(const char *call) {
    const char *spec = stub_env("STUB_MISBEHAVE");
    size_t n = strlen(call);
    if (!spec || strncmp(spec, call, n) != 0 || spec[n] != ':') return;
    const char *how = spec + n + 1;
    fprintf(stderr, "stub: %s misbehaving (%s)\n", call, how);
    fflush(stderr);
    if (strcmp(how, "hang") == 0) for (;;) pause();
    if (strcmp(how, "abort") == 0) abort();
    /* A real fault: Rust installs a SIGSEGV handler that ignores a raise()d one. */
    if (strcmp(how, "segv") == 0) *(volatile int *)0 = 0;
    if (strcmp(how, "garbage") == 0) { printf("not a probe answer\n"); fflush(stdout); _exit(0); }
    if (strcmp(how, "exit") == 0) _exit(7);
}

/* Appends a line to $STUB_LOG (to check that e.g. shutdown was called). */
STUB_HELPER void stub_log(const char *line) {
    const char *path = stub_env("STUB_LOG");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s\n", line);
    fclose(f);
}

/* Parses the i-th entry of a comma-separated list of "M.m" (or "x" for a failing entry).
 * Returns 1 and fills major/minor, 0 for a failing entry, -1 past the end. */
STUB_HELPER int stub_cc_entry(const char *list, int index, int *major, int *minor) {
    if (!list) return -1;
    const char *p = list;
    for (int i = 0; i < index; i++) {
        p = strchr(p, ',');
        if (!p) return -1;
        p++;
    }
    if (*p == 'x') return 0;
    if (sscanf(p, "%d.%d", major, minor) != 2) return 0;
    return 1;
}

STUB_HELPER int stub_cc_count(const char *list) {
    if (!list) return 0;
    int n = 1;
    for (const char *p = list; *p; p++) n += (*p == ',');
    return n;
}
#endif
