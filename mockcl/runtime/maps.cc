// Mappings on maps=copy devices (config.h, map_mode::copy): a mapped region is the host's own
// copy, as on a discrete GPU, so a client that writes through a mapped pointer and lets the device
// use the buffer without unmapping sees stale bytes here as it would on such a device. The rules
// modelled are OpenCL 3.0's "Accessing mapped regions of a memory object" (5.5.4): a region
// mapped for writing is undefined to commands until it is unmapped; a buffer mapped for writing
// must be unmapped before any command that reads or writes it (or its parent or sub-buffers)
// begins execution, and one mapped for reading before any command that writes it.
// In backing mode (backing.h) a maps=copy device's maps are such copies, filled from and written
// back to POCL; on a maps=shared device (the default) a buffer's map is POCL's own mapping of its
// twin, the buffer's bytes, as POCL's CPU device gives them (map_backing): nothing is copied.
// An object made with CL_MEM_USE_HOST_PTR is the exception: OpenCL requires its map to return a
// pointer derived from host_ptr, so its mapping lives in that memory, filled and written back
// the same way.
// Members of mock_runtime; the lock is held.
#include <cstring>

#include "mockcl/runtime/rect.h"
#include "mockcl/runtime/runtime.h"

namespace mockcl {
namespace {

_cl_mem* root_of(_cl_mem* m) { return m->parent ? m->parent : m; }

bool maps_for_writing(cl_map_flags f) {
  return f & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION);
}

// Whether command `ev` writes its i-th buffer (kernels may write any argument).
bool writes(const _cl_event* ev, size_t i) {
  switch (ev->command_type) {
    case CL_COMMAND_READ_BUFFER:
    case CL_COMMAND_READ_IMAGE:
      return false;
    case CL_COMMAND_MIGRATE_MEM_OBJECTS:
      return false;
    case CL_COMMAND_COPY_BUFFER:
    case CL_COMMAND_COPY_IMAGE:
    case CL_COMMAND_COPY_IMAGE_TO_BUFFER:
    case CL_COMMAND_COPY_BUFFER_TO_IMAGE:
      return i == 1;
    default:
      return true;
  }
}

// The mapping at `p` in the state given. Maps of an object made with CL_MEM_USE_HOST_PTR can
// share an address, so the state picks the one meant: the first not yet executed (a map runs),
// the first being unmapped (an unmap runs), the first not being unmapped (an unmap is enqueued).
enum class stage { to_map, unmapping, mapped };
host_mapping* find(_cl_mem* m, const void* p, stage st) {
  for (host_mapping& mp : m->maps) {
    if (mp.at != p) continue;
    if (st == stage::to_map && !mp.active && !mp.unmapping) return &mp;
    if (st == stage::unmapping && mp.unmapping) return &mp;
    if (st == stage::mapped && !mp.unmapping) return &mp;
  }
  return nullptr;
}

// A mapped image's region as rows of bytes, and the staging copy's tight pitches. A 1D array's
// layers are its rows, which both layouts step by their slice pitch.
struct image_rows {
  size_t row_bytes, rows, slices;
  size_t tight_row, tight_slice;  // The staging copy's pitches, as POCL is given them.
  size_t host_row, host_slice;    // The steps between rows and slices in the host memory.
  image_rows(const _cl_mem* m, const host_mapping& mp)
      : row_bytes(m->element_size * mp.region[0]), rows(mp.region[1]), slices(mp.region[2]) {
    const bool layered_1d = m->desc.image_type == CL_MEM_OBJECT_IMAGE1D_ARRAY;
    tight_row = row_bytes;
    tight_slice = layered_1d ? row_bytes : row_bytes * rows;
    host_row = layered_1d ? mp.slice_pitch : mp.row_pitch;
    host_slice = mp.slice_pitch;
  }
};

void activate(_cl_mem* m, host_mapping& mp, bool on) {
  _cl_mem* root = root_of(m);
  uint32_t& count = maps_for_writing(mp.flags) ? root->write_mapped : root->read_mapped;
  count += on ? 1 : -1;
  mp.active = on;
}

// Moves a mapping's bytes between the object and the host memory at mp.at: to the host when a
// map executes, back to the object when a write mapping is unmapped. In backing mode a mapping
// in an object's CL_MEM_USE_HOST_PTR memory (no copy of its own) goes through a staging copy:
// POCL's twin may or may not alias that memory, and a copy onto itself is undefined.
cl_int move_mapped(mock_runtime& rt, _cl_mem* m, _cl_command_queue* q, host_mapping& mp,
                   bool to_object) {
  if (mp.backing) return CL_SUCCESS;  // POCL's own mapping: the bytes are the buffer's.
  const bool staged = mp.copy.data() == nullptr;
  auto* at = static_cast<unsigned char*>(mp.at);
  if (mp.image) {  // Backing mode only: POCL's image, through the region.
    if (!staged)
      return rt.pocl_image_rw(m, q, to_object, mp.origin, mp.region, mp.row_pitch, mp.slice_pitch,
                              at);
    const image_rows r(m, mp);
    host_block tmp;
    if (!tmp.allocate(r.row_bytes * r.rows * r.slices)) return CL_OUT_OF_HOST_MEMORY;
    auto* t = static_cast<unsigned char*>(tmp.data());
    const rect_side host{{0, 0, 0}, r.host_row, r.host_slice},
        tight{{0, 0, 0}, r.tight_row, r.tight_slice};
    const size_t region[3] = {r.row_bytes, r.rows, r.slices};
    if (to_object) rect_copy(t, tight, at, host, region);
    const cl_int st =
        rt.pocl_image_rw(m, q, to_object, mp.origin, mp.region, r.tight_row, r.tight_slice, t);
    if (!to_object && st == CL_SUCCESS) rect_copy(at, host, t, tight, region);
    return st;
  }
  if (rt.pocl) {
    if (!staged) return rt.pocl_transfer(m, q, to_object, mp.offset, mp.size, at);
    host_block tmp;
    if (!tmp.allocate(mp.size)) return CL_OUT_OF_HOST_MEMORY;
    if (to_object) std::memcpy(tmp.data(), at, mp.size);
    const cl_int st = rt.pocl_transfer(m, q, to_object, mp.offset, mp.size, tmp.data());
    if (!to_object && st == CL_SUCCESS) std::memcpy(at, tmp.data(), mp.size);
    return st;
  }
  // mockcl's own bytes; a CL_MEM_USE_HOST_PTR mapping already is them.
  unsigned char* b = rt.bytes_of(m);
  if (b && b + mp.offset != at) {
    if (to_object)
      std::memcpy(b + mp.offset, at, mp.size);
    else
      std::memcpy(at, b + mp.offset, mp.size);
  }
  return CL_SUCCESS;
}

}  // namespace

unsigned char* mock_runtime::use_host_ptr_at(const _cl_mem* m, size_t offset) {
  const _cl_mem* root = m->parent ? m->parent : m;
  if (!(root->flags & CL_MEM_USE_HOST_PTR) || !root->host_ptr) return nullptr;
  return static_cast<unsigned char*>(root->host_ptr) + (m->parent ? m->offset : 0) + offset;
}

void* mock_runtime::map_copy(_cl_mem* m, cl_map_flags flags, size_t offset, size_t size, void* at) {
  host_mapping mp;
  if (at)
    mp.at = at;
  else if (!(mp.at = mp.copy.allocate(size)))
    return nullptr;
  mp.offset = offset;
  mp.size = size;
  mp.flags = flags;
  m->maps.push_back(std::move(mp));
  return m->maps.back().at;
}

void* mock_runtime::map_backing(_cl_mem* m, cl_map_flags flags, size_t offset, size_t size,
                                cl_int& err) {
  _cl_mem* root = root_of(m);
  cl_mem twin = pocl_buffer(root, err);
  if (!twin) return nullptr;
  // Blocking, on the context's twin queue, which is idle (mockcl waits for every POCL command): the
  // address is the application's at once, and the mock's own map command orders the bytes.
  void* p = pocl->d->clEnqueueMapBuffer(root->context->pocl_q, twin, CL_TRUE, flags,
                                        offset + (m->parent ? m->offset : 0), size, 0, nullptr,
                                        nullptr, &err);
  if (!p) return nullptr;
  host_mapping mp;
  mp.at = p;
  mp.offset = offset;
  mp.size = size;
  mp.flags = flags;
  mp.backing = true;
  m->maps.push_back(std::move(mp));
  return p;
}

void mock_runtime::unmap_backing(_cl_mem* m, host_mapping& mp) {
  _cl_mem* root = root_of(m);
  if (!mp.backing || !root->pocl_mem) return;
  cl_command_queue pq = root->context->pocl_q;
  if (pocl->d->clEnqueueUnmapMemObject(pq, root->pocl_mem, mp.at, 0, nullptr, nullptr) ==
      CL_SUCCESS)
    pocl->d->clFinish(pq);
  mp.backing = false;
}

void mock_runtime::cancel_map(_cl_mem* m, const void* p) {
  // An executed unmap's mapping, else a failed map's (the newest at `p`, never executed).
  host_mapping* mp = find(m, p, stage::unmapping);
  if (!mp)
    for (auto it = m->maps.rbegin(); it != m->maps.rend() && !mp; ++it)
      if (it->at == p && !it->active) mp = &*it;
  if (!mp) return;
  if (mp->active) activate(m, *mp, false);
  unmap_backing(m, *mp);
  m->maps.erase(m->maps.begin() + (mp - m->maps.data()));
}

bool mock_runtime::begin_unmap(_cl_mem* m, const void* p) {
  host_mapping* mp = find(m, p, stage::mapped);
  if (!mp) return false;
  mp->unmapping = true;
  return true;
}

cl_int mock_runtime::execute_map(_cl_event* ev) {
  _cl_mem* m = ev->mems[0];
  host_mapping* mp = find(m, ev->host, stage::to_map);
  if (!mp) return CL_SUCCESS;
  const cl_int st = mp->flags & CL_MAP_WRITE_INVALIDATE_REGION
                        ? CL_SUCCESS
                        : move_mapped(*this, m, ev->queue, *mp, false);
  activate(m, *mp, true);  // Even when it failed: the application still unmaps it.
  return st;
}

cl_int mock_runtime::execute_unmap(_cl_event* ev) {
  _cl_mem* m = ev->mems[0];
  host_mapping* mp = find(m, ev->host, stage::unmapping);
  if (!mp) return CL_SUCCESS;
  const cl_int st =
      maps_for_writing(mp->flags) ? move_mapped(*this, m, ev->queue, *mp, true) : CL_SUCCESS;
  cancel_map(m, ev->host);
  return st;
}

void mock_runtime::check_mapped_use(const _cl_event* ev) {
  for (size_t i = 0; i < ev->mems.size(); ++i) {
    _cl_mem* m = ev->mems[i];
    const _cl_mem* root = root_of(m);
    const bool by_write = root->write_mapped > 0;
    if (!by_write && !(writes(ev, i) && root->read_mapped > 0)) continue;
    ++reports_.used_while_mapped;
    report("command " + std::to_string(ev->command_id) + " (" + ev->kind + ") started while mem #" +
           std::to_string(m->id) +
           (m != root ? " (a sub-buffer of mem #" + std::to_string(root->id) + ")" : "") +
           " was mapped for " + (by_write ? "writing" : "reading") +
           ": OpenCL requires the unmap first (the mapped region is undefined to commands until "
           "then)");
    return;  // one report per command
  }
}

void mock_runtime::drop_mappings(_cl_mem* m) {
  for (host_mapping& mp : m->maps) {
    if (mp.active) activate(m, mp, false);
    unmap_backing(m, mp);
  }
  m->maps.clear();
}

}  // namespace mockcl
