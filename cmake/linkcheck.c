/* Empty: the library under check (cuvil_check_link in AddCuvil.cmake)
 * supplies every object of the shared object built from this file. */
typedef int cuvil_linkcheck_unit;
