// Mappings on maps=copy devices (config.h, map_mode::copy): a mapped region is the host's own
// copy, as on a discrete GPU, so a client that writes through a mapped pointer and lets the device
// use the buffer without unmapping sees stale bytes here as it would on such a device. The rules
// modelled are OpenCL 3.0's "Accessing mapped regions of a memory object" (5.5.4): a region
// mapped for writing is undefined to commands until it is unmapped; a buffer mapped for writing
// must be unmapped before any command that reads or writes it (or its parent or sub-buffers)
// begins execution, and one mapped for reading before any command that writes it.
// In backing mode (backing.h) every map is such a copy, filled from and written back to POCL.
// Members of mock_runtime; the lock is held.
#include <cstring>

#include "mockcl/runtime.h"

namespace mockcl {
namespace {

_cl_mem* root_of(_cl_mem* m) { return m->parent ? m->parent : m; }

bool maps_for_writing(cl_map_flags f) { return f & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION); }

// Whether command `ev` writes its i-th buffer (kernels may write any argument).
bool writes(const _cl_event* ev, size_t i) {
  switch (ev->command_type) {
    case CL_COMMAND_READ_BUFFER: case CL_COMMAND_READ_IMAGE: return false;
    case CL_COMMAND_MIGRATE_MEM_OBJECTS: return false;
    case CL_COMMAND_COPY_BUFFER: case CL_COMMAND_COPY_IMAGE: case CL_COMMAND_COPY_IMAGE_TO_BUFFER:
    case CL_COMMAND_COPY_BUFFER_TO_IMAGE:
      return i == 1;
    default: return true;
  }
}

host_mapping* find(_cl_mem* m, const void* p) {
  for (host_mapping& mp : m->maps)
    if (mp.copy.data() == p) return &mp;
  return nullptr;
}

void activate(_cl_mem* m, host_mapping& mp, bool on) {
  _cl_mem* root = root_of(m);
  uint32_t& count = maps_for_writing(mp.flags) ? root->write_mapped : root->read_mapped;
  count += on ? 1 : -1;
  mp.active = on;
}

}  // namespace

void* mock_runtime::map_copy(_cl_mem* m, cl_map_flags flags, size_t offset, size_t size) {
  host_mapping mp;
  if (!mp.copy.allocate(size)) return nullptr;
  mp.offset = offset;
  mp.size = size;
  mp.flags = flags;
  m->maps.push_back(std::move(mp));
  return m->maps.back().copy.data();
}

void mock_runtime::cancel_map(_cl_mem* m, const void* p) {
  for (auto it = m->maps.begin(); it != m->maps.end(); ++it) {
    if (it->copy.data() != p) continue;
    if (it->active) activate(m, *it, false);
    m->maps.erase(it);
    return;
  }
}

bool mock_runtime::begin_unmap(_cl_mem* m, const void* p) {
  host_mapping* mp = find(m, p);
  if (!mp || mp->unmapping) return false;
  mp->unmapping = true;
  return true;
}

void mock_runtime::execute_map(_cl_event* ev) {
  _cl_mem* m = ev->mems[0];
  host_mapping* mp = find(m, ev->host);
  if (!mp) return;
  if (mp->image) {  // Backing mode only: POCL's image, read through the region.
    if (!(mp->flags & CL_MAP_WRITE_INVALIDATE_REGION))
      pocl_image_rw(m, ev->queue, false, mp->origin, mp->region, mp->row_pitch, mp->slice_pitch, mp->copy.data());
  } else if (!(mp->flags & CL_MAP_WRITE_INVALIDATE_REGION)) {
    if (pocl) pocl_transfer(m, ev->queue, false, mp->offset, mp->size, mp->copy.data());
    else if (unsigned char* b = bytes_of(m)) std::memcpy(mp->copy.data(), b + mp->offset, mp->size);
  }
  activate(m, *mp, true);
}

void mock_runtime::execute_unmap(_cl_event* ev) {
  _cl_mem* m = ev->mems[0];
  host_mapping* mp = find(m, ev->host);
  if (!mp) return;
  if (maps_for_writing(mp->flags) && mp->image) {
    pocl_image_rw(m, ev->queue, true, mp->origin, mp->region, mp->row_pitch, mp->slice_pitch, mp->copy.data());
  } else if (maps_for_writing(mp->flags)) {
    if (pocl) pocl_transfer(m, ev->queue, true, mp->offset, mp->size, mp->copy.data());
    else if (unsigned char* b = bytes_of(m)) std::memcpy(b + mp->offset, mp->copy.data(), mp->size);
  }
  cancel_map(m, ev->host);
}

void mock_runtime::check_mapped_use(const _cl_event* ev) {
  for (size_t i = 0; i < ev->mems.size(); ++i) {
    _cl_mem* m = ev->mems[i];
    const _cl_mem* root = root_of(m);
    const bool by_write = root->write_mapped > 0;
    if (!by_write && !(writes(ev, i) && root->read_mapped > 0)) continue;
    ++reports_.used_while_mapped;
    report("command " + std::to_string(ev->command_id) + " (" + ev->kind + ") started while mem #" +
           std::to_string(m->id) + (m != root ? " (a sub-buffer of mem #" + std::to_string(root->id) + ")" : "") +
           " was mapped for " + (by_write ? "writing" : "reading") +
           ": OpenCL requires the unmap first (the mapped region is undefined to commands until then)");
    return;  // one report per command
  }
}

void mock_runtime::drop_mappings(_cl_mem* m) {
  for (host_mapping& mp : m->maps)
    if (mp.active) activate(m, mp, false);
  m->maps.clear();
}

}  // namespace mockcl
