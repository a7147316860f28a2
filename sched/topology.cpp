#include "sched/topology.h"

#include <hwloc.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "core/base/error.h"

namespace rotor::sched {
namespace {

using TopoPtr = std::unique_ptr<hwloc_topology, void (*)(hwloc_topology*)>;

TopoPtr init_topology() {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw SystemError::from_errno("hwloc_topology_init", errno);
    return TopoPtr(t, &hwloc_topology_destroy);
}

}  // namespace

void Topology::Deleter::operator()(hwloc_topology* t) const noexcept { hwloc_topology_destroy(t); }

Topology::Topology(std::unique_ptr<hwloc_topology, Deleter> topo) : topo_(std::move(topo)) {
    hwloc_topology_t t = topo_.get();
    this_system_ = hwloc_topology_is_thissystem(t) != 0;
    numa_nodes_ = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE);
    pus_ = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU);
    const int ncores = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE);
    if (pus_ <= 0 || ncores <= 0) throw SystemError("hwloc: topology has no cores or no PUs");
    for (int n = 0; n < numa_nodes_; ++n) {
        numa_os_.push_back(hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)->os_index);
    }
    for (int c = 0; c < ncores; ++c) {
        hwloc_obj_t core = hwloc_get_obj_by_type(t, HWLOC_OBJ_CORE, c);
        CoreInfo info;
        info.index = c;
        // A core belongs to the NUMA node whose cpuset covers it (hwloc 2 attaches NUMA nodes as
        // memory children, so the node is found by cpuset rather than by walking parents).
        info.numa_node = 0;
        for (int n = 0; n < numa_nodes_; ++n) {
            hwloc_obj_t node = hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, n);
            if (hwloc_bitmap_isincluded(core->cpuset, node->cpuset)) {
                info.numa_node = n;
                break;
            }
        }
        info.numa_os_index = numa_nodes_ > 0 ? numa_os_[info.numa_node] : 0;
        hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, core);
        info.package = pkg != nullptr ? static_cast<int>(pkg->logical_index) : 0;
        unsigned pu = 0;
        hwloc_bitmap_foreach_begin(pu, core->cpuset) { info.pu_os.push_back(pu); }
        hwloc_bitmap_foreach_end();
        if (info.pu_os.empty()) throw SystemError("hwloc: a core has no PU");
        cores_.push_back(std::move(info));
    }
    if (numa_nodes_ <= 0) {
        numa_nodes_ = 1;
        numa_os_.push_back(0);
    }
}

Topology::Topology(Topology&&) noexcept = default;
Topology& Topology::operator=(Topology&&) noexcept = default;
Topology::~Topology() = default;

namespace {

template <class Configure>
std::unique_ptr<hwloc_topology, void (*)(hwloc_topology*)> load(Configure&& configure) {
    TopoPtr t = init_topology();
    configure(t.get());
    if (hwloc_topology_load(t.get()) != 0)
        throw SystemError::from_errno("hwloc_topology_load", errno);
    return t;
}

}  // namespace

Topology Topology::detect() {
    TopoPtr t = load([](hwloc_topology_t) {});
    return Topology(std::unique_ptr<hwloc_topology, Deleter>(t.release()));
}

Topology Topology::from_xml(const std::string& path) {
    TopoPtr t = load([&](hwloc_topology_t raw) {
        if (hwloc_topology_set_xml(raw, path.c_str()) != 0) {
            throw SystemError("hwloc: cannot load topology XML '" + path + "'");
        }
    });
    return Topology(std::unique_ptr<hwloc_topology, Deleter>(t.release()));
}

Topology Topology::synthetic(const std::string& description) {
    TopoPtr t = load([&](hwloc_topology_t raw) {
        if (hwloc_topology_set_synthetic(raw, description.c_str()) != 0) {
            throw ConfigError("topology",
                              "invalid hwloc synthetic description '" + description + "'");
        }
    });
    return Topology(std::unique_ptr<hwloc_topology, Deleter>(t.release()));
}

int Topology::core_numa_node(int core) const {
    ROTOR_ASSERT(core >= 0 && core < cores(), "core index out of range");
    return cores_[static_cast<std::size_t>(core)].numa_node;
}

unsigned Topology::core_pu(int core) const {
    ROTOR_ASSERT(core >= 0 && core < cores(), "core index out of range");
    return cores_[static_cast<std::size_t>(core)].pu_os.front();
}

unsigned Topology::numa_os_index(int node) const {
    ROTOR_ASSERT(node >= 0 && node < numa_nodes_, "NUMA node index out of range");
    return numa_os_[static_cast<std::size_t>(node)];
}

double host_load_average() {
    double load = 0;
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = 0;
        std::fclose(f);
    }
    return load;
}

}  // namespace rotor::sched
