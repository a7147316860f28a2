// The extension module rotor._rotor: the native half of the Python package (python/rotor).
#include <pybind11/pybind11.h>

#include <string>

#include "core/base/error.h"
#include "train/memory_plan.h"

namespace rotor::python {
void add_lda(pybind11::module_& m);
void add_mf(pybind11::module_& m);
void add_lasso(pybind11::module_& m);
void add_logreg(pybind11::module_& m);
void add_rica(pybind11::module_& m);
}  // namespace rotor::python

PYBIND11_MODULE(_rotor, m) {
    m.doc() = "rotor's trainers on in-memory data (docs/python.md)";
    m.attr("__version__") = ROTOR_VERSION;
    rotor::python::add_lda(m);
    rotor::python::add_mf(m);
    rotor::python::add_lasso(m);
    rotor::python::add_logreg(m);
    rotor::python::add_rica(m);
    // max_memory's text checked as --max-memory parses it: a malformed size is a ValueError
    // naming the parameter (the plan's refusal of a run is a MemoryError, at fit).
    m.def("check_size", [](const std::string& text) {
        try {
            return rotor::train::parse_bytes(text, "max_memory");
        } catch (const rotor::ConfigError& e) {
            throw pybind11::value_error(e.what());
        }
    });
}
