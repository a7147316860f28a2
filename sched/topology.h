// The machine's shape as hwloc sees it: NUMA nodes, cores and processing units (PUs, hardware
// threads). Used to plan where worker threads run (placement.h) and to pin them (runtime.h).
//
// A Topology is detected from this machine, or loaded from an hwloc XML export or an hwloc
// synthetic description, so that placement can be tested for a two-socket machine on any box.
// Only a detected topology describes "this system": pinning is refused for the others.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct hwloc_topology;

namespace rotor::sched {

/// One core: where it is and which PUs it has.
struct CoreInfo {
    int index = 0;               ///< logical core index, 0..cores()-1, in hwloc's topological order
    int numa_node = 0;           ///< logical NUMA node index, 0..numa_nodes()-1
    unsigned numa_os_index = 0;  ///< the NUMA node's OS index (what libnuma and tbb expect)
    int package = 0;             ///< logical package (socket) index
    std::vector<unsigned> pu_os;  ///< OS indexes of the core's PUs, ascending; never empty
};

/// An hwloc topology, loaded once and then read-only. Owns the hwloc handle (RAII), move-only.
/// Queries are const and thread-safe; the handle itself is only used by the sched module.
class Topology {
  public:
    /// This machine, restricted to the resources the process may use (cgroup cpusets).
    /// Throws SystemError when hwloc fails.
    static Topology detect();
    /// An hwloc XML export (`lstopo topo.xml`). Throws SystemError for a missing or bad file.
    static Topology from_xml(const std::string& path);
    /// An hwloc synthetic description, e.g. "package:2 numa:1 core:2 pu:1". Throws ConfigError
    /// (key "topology") for a description hwloc rejects.
    static Topology synthetic(const std::string& description);

    Topology(Topology&&) noexcept;
    Topology& operator=(Topology&&) noexcept;
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;
    ~Topology();

    int numa_nodes() const noexcept { return numa_nodes_; }
    int cores() const noexcept { return static_cast<int>(cores_.size()); }
    int pus() const noexcept { return pus_; }
    /// Every core, indexed by its logical index.
    std::span<const CoreInfo> core_info() const noexcept { return cores_; }
    /// The logical NUMA node of core `core` (0 <= core < cores()).
    int core_numa_node(int core) const;
    /// The OS index of the first PU of core `core` (0 <= core < cores()).
    unsigned core_pu(int core) const;
    /// The OS index of logical NUMA node `node`.
    unsigned numa_os_index(int node) const;
    /// True for detect(): the topology describes the machine this process runs on.
    bool is_this_system() const noexcept { return this_system_; }

    /// The raw hwloc handle, for the sched module's own use (pinning). Never null.
    hwloc_topology* handle() const noexcept { return topo_.get(); }

  private:
    struct Deleter {
        void operator()(hwloc_topology* t) const noexcept;
    };
    explicit Topology(std::unique_ptr<hwloc_topology, Deleter> topo);

    std::unique_ptr<hwloc_topology, Deleter> topo_;
    std::vector<CoreInfo> cores_;
    std::vector<unsigned> numa_os_;
    int numa_nodes_ = 0;
    int pus_ = 0;
    bool this_system_ = false;
};

/// The load other processes put on this host's cores: the 1-minute load average of
/// /proc/loadavg, 0 where there is none. What a default thread count leaves free.
double host_load_average();

}  // namespace rotor::sched
