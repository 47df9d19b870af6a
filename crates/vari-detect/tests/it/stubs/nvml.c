/* Stub NVML (libnvidia-ml) for vari's tests. Environment:
 *   STUB_NVML_INIT_ERROR=<code>      nvmlInit_v2 returns <code>
 *   STUB_NVML_CUDA=<int>             raw CUDA version (default 12080)
 *   STUB_NVML_V2_ERROR=<code>        the _v2 CUDA call fails with <code> (the v1 call still works)
 *   STUB_NVML_DRIVER=<string>        kernel driver version (default 570.86.15)
 *   STUB_NVML_CCS=8.6,x,9.0          devices' compute capabilities; x = a device whose call fails
 *   STUB_MISBEHAVE=<call>:<how>      hang/abort/segv/garbage/exit at nvmlInit_v2, ...
 *   STUB_LOG=<file>                  records "init" and "shutdown"
 *   STUB_NVML_UUIDS=GPU-a,GPU-b      devices' UUIDs (default GPU-stub-<index>)
 *   STUB_NVML_MIG=<index>:<MIG-uuid> one MIG device on GPU <index>
 * Build with -DSTUB_NO_V2 to omit nvmlSystemGetCudaDriverVersion_v2 entirely. */
#include "common.h"

typedef void *nvmlDevice_t;
static int devices[64];

int nvmlInit_v2(void) {
    stub_misbehave("nvmlInit_v2");
    int code = stub_env_int("STUB_NVML_INIT_ERROR", 0);
    if (code == 0) stub_log("init");
    return code;
}

int nvmlShutdown(void) {
    stub_misbehave("nvmlShutdown");
    stub_log("shutdown");
    return 0;
}

int nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    const char *v = stub_env("STUB_NVML_DRIVER");
    snprintf(version, length, "%s", v ? v : "570.86.15");
    return 0;
}

#ifndef STUB_NO_V2
int nvmlSystemGetCudaDriverVersion_v2(int *version) {
    stub_misbehave("nvmlSystemGetCudaDriverVersion_v2");
    int code = stub_env_int("STUB_NVML_V2_ERROR", 0);
    if (code) return code;
    *version = stub_env_int("STUB_NVML_CUDA", 12080);
    return 0;
}
#endif

int nvmlSystemGetCudaDriverVersion(int *version) {
    *version = stub_env_int("STUB_NVML_CUDA", 12080);
    return 0;
}

int nvmlDeviceGetCount_v2(unsigned int *count) {
    stub_misbehave("nvmlDeviceGetCount_v2");
    int n = stub_cc_count(stub_env("STUB_NVML_CCS"));
    *count = (unsigned int)(n > 64 ? 64 : n);
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (index >= 64) return 2; /* NVML_ERROR_INVALID_ARGUMENT */
    devices[index] = (int)index;
    *device = &devices[index];
    return 0;
}

int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor) {
    stub_misbehave("nvmlDeviceGetCudaComputeCapability");
    int index = *(int *)device;
    int r = stub_cc_entry(stub_env("STUB_NVML_CCS"), index, major, minor);
    return r == 1 ? 0 : 3; /* NVML_ERROR_NOT_SUPPORTED */
}

/* The i-th comma-separated entry of list into out ("" past the end). */
static void stub_list_entry(const char *list, int index, char *out, size_t length) {
    out[0] = 0;
    if (!list) return;
    const char *p = list;
    for (int i = 0; i < index; i++) {
        p = strchr(p, ',');
        if (!p) return;
        p++;
    }
    size_t n = strcspn(p, ",");
    if (n >= length) n = length - 1;
    memcpy(out, p, n);
    out[n] = 0;
}

/* MIG device handles point here; GPU handles point into devices[]. */
static int mig_devices[64];

int nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    if ((int *)device >= mig_devices && (int *)device < mig_devices + 64) {
        const char *mig = stub_env("STUB_NVML_MIG");
        const char *colon = mig ? strchr(mig, ':') : NULL;
        if (!colon) return 3;
        snprintf(uuid, length, "%s", colon + 1);
        return 0;
    }
    int index = *(int *)device;
    char entry[96];
    stub_list_entry(stub_env("STUB_NVML_UUIDS"), index, entry, sizeof entry);
    if (entry[0]) snprintf(uuid, length, "%s", entry);
    else snprintf(uuid, length, "GPU-stub-%d", index);
    return 0;
}

int nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned int *count) {
    const char *mig = stub_env("STUB_NVML_MIG");
    int index = *(int *)device;
    if (!mig || atoi(mig) != index) return 3; /* NVML_ERROR_NOT_SUPPORTED: MIG off */
    *count = 1;
    return 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned int i, nvmlDevice_t *mig) {
    int index = *(int *)device;
    if (i != 0) return 6; /* NVML_ERROR_NOT_FOUND */
    mig_devices[index] = index;
    *mig = &mig_devices[index];
    return 0;
}
