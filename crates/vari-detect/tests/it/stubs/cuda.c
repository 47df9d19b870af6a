/* Stub CUDA driver API (libcuda) for vari's tests. Environment:
 *   STUB_CUDA_VERSION=<int>    cuDriverGetVersion value (default 12040)
 *   STUB_CUDA_INIT_ERROR=<code> cuInit returns <code>
 *   STUB_CUDA_CCS=7.5,8.9      devices' compute capabilities (x = failing device)
 *   STUB_MISBEHAVE=<call>:<how> */
#include "common.h"

int cuDriverGetVersion(int *version) {
    stub_misbehave("cuDriverGetVersion");
    *version = stub_env_int("STUB_CUDA_VERSION", 12040);
    return 0;
}

int cuInit(unsigned int flags) {
    stub_misbehave("cuInit");
    if (flags != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
    return stub_env_int("STUB_CUDA_INIT_ERROR", 0);
}

int cuDeviceGetCount(int *count) {
    *count = stub_cc_count(stub_env("STUB_CUDA_CCS"));
    return 0;
}

int cuDeviceGet(int *device, int ordinal) {
    if (ordinal < 0 || ordinal >= stub_cc_count(stub_env("STUB_CUDA_CCS"))) return 101;
    *device = ordinal;
    return 0;
}

int cuDeviceGetAttribute(int *value, int attribute, int device) {
    int major, minor;
    if (stub_cc_entry(stub_env("STUB_CUDA_CCS"), device, &major, &minor) != 1) return 101;
    if (attribute == 75) { *value = major; return 0; }
    if (attribute == 76) { *value = minor; return 0; }
    return 1;
}
