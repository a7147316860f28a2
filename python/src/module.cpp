// The extension module rotor._rotor: the native half of the Python package (python/rotor).
#include <pybind11/pybind11.h>

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
}
