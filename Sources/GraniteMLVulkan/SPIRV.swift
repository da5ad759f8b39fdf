/// Namespace for the SPIR-V words the SPIRVEmbed plugin generates from `Shaders/GraniteMLVulkan/*.comp`.
enum SPIRV {}
