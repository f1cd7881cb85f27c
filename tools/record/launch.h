// What `clpool record` and `clpool sweep` share to start a program under the clpool layer: the
// layer that belongs with this binary, the program as execvp finds it, and the environment that
// loads the layer with a set of CLPOOL_LAYER_* settings, checked by the layer's own parser.
#ifndef CLPOOL_TOOLS_RECORD_LAUNCH_H_
#define CLPOOL_TOOLS_RECORD_LAUNCH_H_

#include <string>
#include <string_view>
#include <vector>

namespace clpool::record {

std::string real_path(const std::string& path);  // "" when it does not resolve
std::string dir_of(const std::string& path);
// Where a file created at `path` lands: `path`, or for a symbolic link (to nothing yet: open
// with O_CREAT creates it) its target, relative to the link's directory when relative.
std::string creation_target(const std::string& path);
// A profile as the program is to be given it: a profile file's path made absolute (the program
// may change its directory before the layer loads it), a built-in profile's name as it is.
std::string program_profile(const std::string& profile);
bool is_regular_file(const std::string& path);
// `path` from the current directory when it is relative (the layer opens its files at the
// program's first OpenCL call, perhaps after a chdir).
std::string absolute(const std::string& path);

// The layer that belongs with this binary: DIR/lib/libclpool_layer.so next to DIR/bin/clpool in
// an installation (tools/install.sh), or bazel-bin/tools/layer/ next to bazel-bin/tools/record/.
// Found from the executable's real path, so a symlink to it (runfiles, PATH) finds it too. ""
// when there is none, with `looked_in` naming where it looked.
std::string find_layer(std::string& looked_in);

// PROGRAM as execvp would find it, or "" with `problem` saying why there is nothing to run: no
// such file, or a file that is there but cannot be executed (no execute permission, a directory),
// which is a different mistake with a different fix.
std::string resolve_program(const std::string& name, std::string& problem);

// The program's environment: this process's, with `layer` appended to OPENCL_LAYERS (outermost)
// and `settings` ("CLPOOL_LAYER_TRACE=...", ...) added. Returns an error, "" on success: a
// variable of `ours` already set in this environment ("NAME is set in the environment; TOOL sets
// it from its flags (unset it)"), OPENCL_LAYERS already loading the layer, or a configuration the
// layer's own parser refuses (a misspelt CLPOOL_LAYER_* variable, a bad FAIL_NTH, ...).
std::string layer_environment(const std::string& layer, const std::vector<std::string>& settings,
                              const std::vector<std::string_view>& ours, const std::string& tool,
                              std::vector<std::string>& env);

}  // namespace clpool::record

#endif  // CLPOOL_TOOLS_RECORD_LAUNCH_H_
