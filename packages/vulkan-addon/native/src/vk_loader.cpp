#include "vk_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace sgfp4 {

const char* const kInstallHint =
    "Install it with: apt-get install libvulkan1 mesa-vulkan-drivers (Debian/Ubuntu; mesa-vulkan-drivers "
    "gives the CPU device lavapipe), or install your GPU vendor's Vulkan driver";

#define SGFP4_DEFINE(name) PFN_##name name = nullptr;
SGFP4_VK_GLOBAL(SGFP4_DEFINE)
SGFP4_VK_INSTANCE(SGFP4_DEFINE)
#undef SGFP4_DEFINE

std::string versionString(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." + std::to_string(VK_API_VERSION_PATCH(v));
}

void check(VkResult r, const char* what) {
  if (r == VK_SUCCESS) return;
  std::string detail = std::string(what) + " failed with VkResult " + std::to_string(int(r));
  if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) detail += " (out of memory)";
  if (r == VK_ERROR_DEVICE_LOST) detail += " (device lost)";
  throw BackendFailure("vulkan-error", detail);
}

namespace {
// Optional entry points (Vulkan 1.1): their absence only limits what the device reports.
bool optional(const char* name) { return std::strcmp(name, "vkGetPhysicalDeviceProperties2") == 0 || std::strcmp(name, "vkGetPhysicalDeviceFeatures2") == 0; }
}  // namespace

Instance& loadInstance() {
  static Instance* inst = nullptr;
  if (inst) return *inst;
  const char* override = std::getenv("SGFP4_VULKAN_LOADER");
  const char* path = override && *override ? override : "libvulkan.so.1";
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    throw BackendFailure("no-loader", std::string("the Vulkan loader ") + path + " could not be loaded (" + (err ? err : "dlopen failed") +
                                          "). " + kInstallHint + ". SGFP4_VULKAN_LOADER may name the loader's path.");
  }
  auto getInstanceProcAddr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(lib, "vkGetInstanceProcAddr"));
  if (!getInstanceProcAddr) throw BackendFailure("no-loader", std::string(path) + " has no vkGetInstanceProcAddr: not a Vulkan loader. " + kInstallHint);
#define SGFP4_LOAD_GLOBAL(name) name = reinterpret_cast<PFN_##name>(getInstanceProcAddr(VK_NULL_HANDLE, #name));
  SGFP4_VK_GLOBAL(SGFP4_LOAD_GLOBAL)
#undef SGFP4_LOAD_GLOBAL
  if (!vkCreateInstance) throw BackendFailure("no-loader", std::string(path) + " does not provide vkCreateInstance. " + kInstallHint);
  auto out = std::make_unique<Instance>();
  out->loaderPath = path;
  uint32_t loaderVersion = VK_API_VERSION_1_0;
  if (vkEnumerateInstanceVersion) vkEnumerateInstanceVersion(&loaderVersion);
  out->apiVersion = loaderVersion >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_0;
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "sgfp4-vulkan-addon";
  app.apiVersion = out->apiVersion;
  VkInstanceCreateInfo ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ci.pApplicationInfo = &app;
  VkResult r = vkCreateInstance(&ci, nullptr, &out->handle);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw BackendFailure("no-device", std::string("the Vulkan loader (") + path + ") found no driver (VK_ERROR_INCOMPATIBLE_DRIVER). " + kInstallHint + "; check with vulkaninfo --summary.");
  check(r, "vkCreateInstance");
#define SGFP4_LOAD_INSTANCE(name)                                                 \
  name = reinterpret_cast<PFN_##name>(getInstanceProcAddr(out->handle, #name));   \
  if (!name && !optional(#name)) throw BackendFailure("no-loader", std::string("the Vulkan loader does not provide ") + #name);
  SGFP4_VK_INSTANCE(SGFP4_LOAD_INSTANCE)
#undef SGFP4_LOAD_INSTANCE
  inst = out.release();
  return *inst;
}

}  // namespace sgfp4
