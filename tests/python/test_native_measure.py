"""The measurement half of kbench_native (CUPTI tracing, call summaries, NVML clocks).

On a machine without a GPU every loader must answer a reason starting with "unsupported:"
rather than raise or crash; on a GPU machine those checks are skipped.
"""

import ctypes

import pytest

from kbench.worker.native import kn as kbench_native


def _gpu_present():
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    if driver.cuInit(0) != 0 or driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return False
    return count.value > 0


def test_cupti_load_answers_a_string():
    answer = kbench_native.cupti_load()
    assert isinstance(answer, str)
    assert kbench_native.cupti_load() == answer


@pytest.mark.skipif(_gpu_present(), reason="a GPU is present: CUPTI may load")
def test_cupti_is_unsupported_without_gpu():
    assert kbench_native.cupti_load().startswith("unsupported:")
    assert kbench_native.cupti_start().startswith("unsupported:")
    assert kbench_native.cupti_flush() == []
    assert kbench_native.cupti_timestamp_ns() == 0
    assert kbench_native.cupti_stream_id(0, 0) == kbench_native.CUPTI_INVALID_STREAM_ID
    assert isinstance(kbench_native.cupti_notes(), list)
    kbench_native.cupti_stop()


def test_summarize_call_without_records():
    summary = kbench_native.summarize_call(0, 10**9, 7, ["relu_kernel"], flush=False)
    assert summary["device_us"] == 0
    assert summary["kernel_count"] == 0
    assert summary["kernels_by_name"] == {}
    assert summary["streams"] == []
    assert summary["off_caller_stream_work"] is False
    assert summary["own_kernel_share"] == 0
    assert summary["first_start_ns"] is None


def test_summarize_call_takes_the_callers_done_time():
    summary = kbench_native.summarize_call(0, 10**9, 7, [], flush=False, caller_done_ns=5000)
    assert summary["caller_done_ns"] == 5000
    assert summary["unjoined_stream_work"] is False
    assert summary["unjoined_tail_us"] == 0
    assert kbench_native.summarize_call(0, 10**9, 7, flush=False)["caller_done_ns"] is None


def test_call_facts_carry_the_unjoined_work_and_the_streams():
    from kbench.worker.tracing import call_facts

    facts = call_facts(kbench_native.summarize_call(0, 10**9, 7, ["k"], flush=False, caller_done_ns=5000))
    assert facts["unjoined_stream_work"] is False
    assert facts["unjoined_tail_us"] == 0
    assert facts["off_caller_stream"] is False
    assert facts["streams"] == 0
    assert facts["kernels_by_name"] == {}


def test_summarize_call_flushes_by_default():
    summary = kbench_native.summarize_call(0, 10**9, 7)
    assert summary["device_us"] == 0
    assert summary["dropped_records"] >= 0


def test_record_fields_describe_flushed_tuples():
    fields = kbench_native.CUPTI_RECORD_FIELDS
    assert fields[:5] == ("kind", "name", "mangled", "start_ns", "end_ns")
    assert len(set(fields)) == len(fields)


@pytest.mark.skipif(_gpu_present(), reason="a GPU is present: NVML may load")
def test_nvml_is_unsupported_without_gpu():
    assert kbench_native.nvml_load("0000:19:00.0").startswith("unsupported:")
    reading = kbench_native.nvml_read()
    assert reading["error"]
    assert reading["power_mw"] is None
    assert kbench_native.nvml_limits() == {
        "default_sm_mhz": None,
        "max_sm_mhz": None,
        "max_mem_mhz": None,
    }
    assert kbench_native.nvml_energy_mj() is None


def _bare_tracer(legacy_stream_id):
    from kbench.worker.tracing import Tracer

    tracer = Tracer.__new__(Tracer)  # no GPU here: the probe's answer set by hand
    tracer.reason, tracer.legacy_stream_id, tracer.overhead_us = "", legacy_stream_id, None
    return tracer


def test_tracer_windows_take_the_callers_done_time_or_not():
    tracer = _bare_tracer(3)
    with_done, without = tracer.summarize([(0, 10**9, 5000), (0, 10**9)], 7, [])
    assert with_done["caller_done_ns"] == 5000
    assert without["caller_done_ns"] is None
    assert with_done["legacy_default_stream_id"] == 3
    with pytest.raises(ValueError, match="a window is"):
        tracer.summarize([(0,)], 7, [])


def test_torchs_default_stream_is_the_legacy_streams_probed_id():
    class Stream:
        cuda_stream = 0

    assert _bare_tracer(3).stream_id(Stream()) == 3
    # Without a probed id it is left to CUPTI (which answers invalid without a GPU).
    assert _bare_tracer(None).stream_id(Stream()) == kbench_native.cupti_stream_id(0, 0)
