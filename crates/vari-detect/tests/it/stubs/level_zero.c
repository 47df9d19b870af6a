/* Stub Level Zero loader (libze_loader) for vari's tests. Environment:
 *   STUB_ZE_DEVICES=0x8086:20.2.0,0x10de:12.60.7   devices: vendor and IP version (arch.release.rev)
 *   STUB_ZE_INIT_ERROR=<code>                       zeInitDrivers/zeInit fail with <code>
 *   STUB_MISBEHAVE=<call>:<how>
 * Build with -DSTUB_NO_INIT_DRIVERS for a pre-1.10 loader (zeInit + zeDriverGet only).
 * zeDeviceGetProperties checks the caller's struct types and fills the IP-version extension
 * (stype 0x1000f) found through pNext, as the real loader does. */
#include <stdint.h>
#include "common.h"

typedef struct { uint32_t stype; const void *pNext; uint32_t flags; } ze_init_driver_type_desc_t;
typedef struct { uint32_t stype; void *pNext; uint32_t ipVersion; } ze_device_ip_version_ext_t;
typedef struct {
    uint32_t stype; void *pNext; uint32_t type; uint32_t vendorId; uint32_t deviceId;
    uint32_t flags; uint32_t subdeviceId; uint32_t coreClockRate; uint64_t maxMemAllocSize;
    uint32_t maxHardwareContexts; uint32_t maxCommandQueuePriority; uint32_t numThreadsPerEU;
    uint32_t physicalEUSimdWidth; uint32_t numEUsPerSubslice; uint32_t numSubslicesPerSlice;
    uint32_t numSlices; uint64_t timerResolution; uint32_t timestampValidBits;
    uint32_t kernelTimestampValidBits; uint8_t uuid[16]; char name[256];
} ze_device_properties_t;

_Static_assert(sizeof(void *) != 8 || __builtin_offsetof(ze_device_properties_t, name) == 112,
               "layout must match vari's DeviceProperties");

static int driver_token, device_tokens[16];

static int device_count(void) {
    const char *list = stub_env("STUB_ZE_DEVICES");
    if (!list) return 0;
    int n = 1;
    for (const char *p = list; *p; p++) n += (*p == ',');
    return n > 16 ? 16 : n;
}

static int device_entry(int index, unsigned *vendor, unsigned *arch, unsigned *rel, unsigned *rev) {
    const char *p = stub_env("STUB_ZE_DEVICES");
    for (int i = 0; p && i < index; i++) { p = strchr(p, ','); if (p) p++; }
    if (!p) return 0;
    return sscanf(p, "%x:%u.%u.%u", vendor, arch, rel, rev) == 4;
}

static int init_common(void) { return stub_env_int("STUB_ZE_INIT_ERROR", 0); }

#ifndef STUB_NO_INIT_DRIVERS
int zeInitDrivers(uint32_t *count, void **drivers, ze_init_driver_type_desc_t *desc) {
    stub_misbehave("zeInitDrivers");
    if (!desc || desc->stype != 0x00020021 || !(desc->flags & 1)) return 0x78000004;
    int code = init_common();
    if (code) return code;
    if (drivers && *count >= 1) drivers[0] = &driver_token;
    *count = 1;
    return 0;
}
#endif

int zeInit(uint32_t flags) {
    stub_misbehave("zeInit");
    (void)flags;
    return init_common();
}

int zeDriverGet(uint32_t *count, void **drivers) {
    if (drivers && *count >= 1) drivers[0] = &driver_token;
    *count = 1;
    return 0;
}

int zeDeviceGet(void *driver, uint32_t *count, void **devices) {
    if (driver != &driver_token) return 0x78000005;
    int n = device_count();
    if (devices) {
        for (int i = 0; i < n && i < (int)*count; i++) { device_tokens[i] = i; devices[i] = &device_tokens[i]; }
    }
    *count = (uint32_t)n;
    return 0;
}

int zeDeviceGetProperties(void *device, ze_device_properties_t *props) {
    stub_misbehave("zeDeviceGetProperties");
    if (!props || props->stype != 0x3) return 0x78000004;
    int index = *(int *)device;
    unsigned vendor = 0, arch = 0, rel = 0, rev = 0;
    if (!device_entry(index, &vendor, &arch, &rel, &rev)) return 0x7ffffffe;
    props->vendorId = vendor;
    props->deviceId = 0x1000 + index;
    props->type = 1;
    snprintf(props->name, sizeof props->name, "Stub GPU %d", index);
    for (ze_device_ip_version_ext_t *ext = props->pNext; ext; ext = ext->pNext) {
        if (ext->stype == 0x1000f) ext->ipVersion = (arch << 22) | (rel << 14) | rev;
    }
    return 0;
}
