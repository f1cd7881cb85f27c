"""A block reused on the out-of-order queue its last user's commands were enqueued on: the new
user's commands must not run before the old user's. An out-of-order queue may run any command
whose wait list is met, and a pool hands the block out again as soon as the old user drops it, so
without ordering a new user's write can overtake a read still queued (PyOpenCL's
test_outoforderqueue_indexing got wrong results this way with PyOpenCL's pool and with
clpool's). clpool's MemoryPool over an ImmediateAllocator on an out-of-order queue enqueues a
barrier on that queue when it hands out a used block. Runs on mockcl and on POCL: the old user's
command waits on a user event, so the order is the test's, not the scheduler's."""
import unittest

import numpy as np
import pyopencl as cl

import clpool.pyopencl as cp
import cltest

SIZE = 1 << 16


class OutOfOrderQueueTest(unittest.TestCase):
    def setUp(self):
        self.ctx, _ = cltest.context_and_queue()
        self.queue = cl.CommandQueue(
            self.ctx, properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE
        )
        self.gates = []

    def tearDown(self):
        for gate in self.gates:  # a failed check must not leave the queue waiting forever
            if gate.command_execution_status != cl.command_execution_status.COMPLETE:
                gate.set_status(cl.command_execution_status.COMPLETE)
        self.queue.finish()

    def held_read(self, buf):
        """The old user's last use: a read of `buf` that cannot start until the user event is set."""
        gate = cl.UserEvent(self.ctx)
        self.gates.append(gate)
        host = np.empty(SIZE, np.uint8)
        read = cl.enqueue_copy(self.queue, host, buf, wait_for=[gate], is_blocking=False)
        return gate, read, host

    def test_a_reused_block_waits_for_its_last_users_commands(self):
        pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))
        b = pool.allocate(SIZE)
        cl.enqueue_fill_buffer(self.queue, b, np.uint8(7), 0, SIZE).wait()
        gate, read, host = self.held_read(b)
        handle = b.int_ptr
        del b  # the old user is done with it; its read is still queued
        b = pool.allocate(SIZE)
        self.assertEqual(b.int_ptr, handle)  # the same block, reused
        write = cl.enqueue_fill_buffer(self.queue, b, np.uint8(9), 0, SIZE)
        self.queue.flush()
        # The write waits behind the read, which waits for the gate.
        self.assertNotEqual(write.command_execution_status, cl.command_execution_status.COMPLETE)
        gate.set_status(cl.command_execution_status.COMPLETE)
        write.wait()
        read.wait()
        self.assertTrue((host == 7).all(), "the old user's read saw the new user's write")
        del b

    def test_a_fresh_block_is_not_ordered(self):
        # Only reuse orders the queue: a block no user has had yet does not wait for other work.
        pool = cp.MemoryPool(cp.ImmediateAllocator(self.queue))
        other = pool.allocate(SIZE)
        gate, read, _ = self.held_read(other)
        b = pool.allocate(SIZE)
        write = cl.enqueue_fill_buffer(self.queue, b, np.uint8(9), 0, SIZE)
        write.wait()  # completes with the read still held
        self.assertNotEqual(read.command_execution_status, cl.command_execution_status.COMPLETE)
        gate.set_status(cl.command_execution_status.COMPLETE)
        read.wait()
        del b, other


if __name__ == "__main__":
    unittest.main()
