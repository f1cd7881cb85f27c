// The one way a clpool tool or the mock accepts a shared library the user names (the mock for
// clpool_replay --mockcl-so, the layer for clpool record --layer, the backing driver behind
// MOCKCL_POCL_ICD): the file is read as ELF before anything maps it, because the dynamic loader
// trusts the file's headers. A library cut short (`head -c 5000 libmockcl.so > t.so`) has
// segments that point past its end; dlopen maps them and dies of SIGBUS reading the first one.
//
//   std::string why = clpool::common::shared_library_refusal(path, {"clGetLayerInfo"});
//   if (why.empty()) why = clpool::common::trial_load_refusal(path, {"clGetLayerInfo"});
//   if (!why.empty()) fail("--layer: '" + path + "' " + why);
//
// shared_library_refusal() reads only the file (headers, segments' extents, the dynamic symbol
// table); trial_load_refusal() then dlopens it in a child process, so that a library whose
// headers pass but which the loader still cannot take (a corrupt relocation, an initialiser that
// crashes) costs the child, never the tool. Both return "" or one sentence without the path.
#ifndef CLPOOL_COMMON_SHARED_LIBRARY_H_
#define CLPOOL_COMMON_SHARED_LIBRARY_H_

#include <string>
#include <vector>

namespace clpool::common {

// "" when `path` is an ELF shared object this process could map, else why not: not a regular
// file, not ELF, another class, byte order or machine than this process's, not a shared object,
// program or section headers or a loadable or dynamic segment outside the file (truncated), no
// dynamic segment, or (when the file has a dynamic symbol table) a name of `exports` it does not
// define. Reads at most the headers and the dynamic symbol and string tables (each bounded by the
// file's size); never maps or runs anything.
std::string shared_library_refusal(const std::string& path,
                                   const std::vector<std::string>& exports);

// Whether the file defines the dynamic symbol `name` (false also when it cannot be read as ELF or
// has no section headers). Used to tell clpool's own mock from a driver (it defines
// mockcl_configure) without loading either.
bool defines_symbol(const std::string& path, const std::string& name);

// "" when a child process can dlopen `path` (RTLD_NOW | RTLD_LOCAL) and find every name in
// `exports`, else why not: the loader's message, the missing names, or the signal that killed the
// child ("crashes the dynamic loader (signal 7, Bus error, in a trial load in a child process)").
// Runs the library's initialisers in the child only. Call only where forking is safe (a tool's
// start, one thread).
std::string trial_load_refusal(const std::string& path, const std::vector<std::string>& exports);

}  // namespace clpool::common

#endif  // CLPOOL_COMMON_SHARED_LIBRARY_H_
