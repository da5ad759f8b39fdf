// Vulkan for Swift: the loader's header plus `static inline` stand-ins for the function-like
// macros and wide constants Swift cannot import.
#ifndef GRANITE_CVULKAN_SHIM_H
#define GRANITE_CVULKAN_SHIM_H

#include <vulkan/vulkan.h>
#include <stdint.h>

static inline uint32_t granite_vk_make_api_version(uint32_t variant, uint32_t major, uint32_t minor, uint32_t patch) {
    return VK_MAKE_API_VERSION(variant, major, minor, patch);
}
static inline uint32_t granite_vk_api_version_major(uint32_t version) { return VK_API_VERSION_MAJOR(version); }
static inline uint32_t granite_vk_api_version_minor(uint32_t version) { return VK_API_VERSION_MINOR(version); }
static inline uint32_t granite_vk_api_version_patch(uint32_t version) { return VK_API_VERSION_PATCH(version); }

static inline uint32_t granite_vk_api_version_1_1(void) { return VK_API_VERSION_1_1; }
static inline uint64_t granite_vk_whole_size(void) { return VK_WHOLE_SIZE; }
static inline uint32_t granite_vk_queue_family_ignored(void) { return VK_QUEUE_FAMILY_IGNORED; }

// Handles are pointers on 64-bit targets; the Swift side relies on it.
_Static_assert(sizeof(VkBuffer) == sizeof(void *), "non-dispatchable handles must be pointers");
_Static_assert(sizeof(VkDeviceSize) == 8, "VkDeviceSize must be 64-bit");

#endif
