# FindNUMA: libnuma (Debian: libnuma-dev). Defines NUMA_FOUND and the imported target NUMA::numa.
find_path(NUMA_INCLUDE_DIR NAMES numa.h)
find_library(NUMA_LIBRARY NAMES numa)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NUMA DEFAULT_MSG NUMA_LIBRARY NUMA_INCLUDE_DIR)
if(NUMA_FOUND AND NOT TARGET NUMA::numa)
  add_library(NUMA::numa UNKNOWN IMPORTED)
  set_target_properties(NUMA::numa PROPERTIES
    IMPORTED_LOCATION "${NUMA_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NUMA_INCLUDE_DIR}")
endif()
mark_as_advanced(NUMA_INCLUDE_DIR NUMA_LIBRARY)
