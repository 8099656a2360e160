"""The torch side of a module function call (fp8mlir.module.Function).

A call runs from a plan per argument shapes (one for a function without
run-time symbols; the last few shapes otherwise): the fp8rt_tensor arrays
with every extent and dtype filled in, the result shapes and the workspace
size. It checks each tensor against the plan in Python (shape, dtype,
contiguity: cheap comparisons) and writes the data pointers only. Shapes
without a plan, or a tensor that does not match one (where the runtime is to
report what is wrong), take the general path, which describes every tensor
anew and, when the call succeeds, leaves a plan for those shapes.
"""

import ctypes

import torch

from . import _runtime
from .module import evaluate

TORCH_DTYPES = {"e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2,
                "bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
                "i32": torch.int32}
if hasattr(torch, "float8_e8m0fnu"):
    TORCH_DTYPES["ue8m0"] = torch.float8_e8m0fnu
_Array = _runtime.Fp8rtTensor


def torch_dtype(name):
    try:
        return TORCH_DTYPES[name]
    except KeyError:
        raise TypeError(f"this torch has no dtype for fp8rt's {name}") from None


def _current_stream(index):
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(index)
    return torch.cuda.current_stream(index).cuda_stream


def _describe(slot, name, tensor):
    """Fills the fp8rt_tensor `slot` from `tensor` (None: absent)."""
    if tensor is None:
        slot.data, slot.rank = None, 0
    else:
        _runtime.fill_operand(slot, name, tensor)


def _extension_for(function):
    """The loaded C++ extension when it calls the same libfp8rt as
    `function`'s (its operators fp8mlir::_call / _call_planned), else None."""
    from . import _torch_ops
    extension = _torch_ops.EXTENSION
    if extension is None or extension.function_call is None:
        return None
    mine = ctypes.cast(function._lib.fp8rt_function_call, ctypes.c_void_p).value
    return extension if mine == extension.function_call else None


class FunctionCall:
    def __init__(self, function):
        self.fn = function
        self._call = function._lib.fp8rt_function_call
        self._handle = function._handle
        self._address = ctypes.cast(function._handle, ctypes.c_void_p).value
        self._extension = _extension_for(function)
        self.arg_dtypes = [torch_dtype(a.dtype) for a in function.arguments]
        self.res_dtypes = [torch_dtype(r.dtype) for r in function.results]
        self.owned = [i for i, r in enumerate(function.results) if r.alias_of is None]
        self.static = function._static
        self.plans = {}  # argument shapes (None when static) -> _Plan
        if self.static:
            shapes = [tuple(a.shape) for a in function.arguments]
            self.plans[None] = _Plan(self, shapes, function.result_shapes({}),
                                     function.workspace_bytes())

    @staticmethod
    def _array(infos, shapes):
        array = (_Array * max(len(infos), 1))()
        for slot, info, shape in zip(array, infos, shapes):
            slot.dtype = _runtime.DTYPES[info.dtype]
            slot.rank = len(shape)
            for d, extent in enumerate(shape):
                slot.shape[d] = extent
        return array

    def _arguments(self, args, kwargs):
        fn = self.fn
        names = fn.argument_names
        if len(args) > len(names):
            raise TypeError(f"{fn.name}() takes {len(names)} arguments "
                            f"({', '.join(names)}), got {len(args)}")
        tensors = list(args) + [None] * (len(names) - len(args))
        for name, tensor in kwargs.items():
            i = fn._index.get(name)
            if i is None:
                raise TypeError(f"{fn.name}() has no argument {name!r} (its arguments: "
                                f"{', '.join(names)})")
            if i < len(args):
                raise TypeError(f"{fn.name}() got argument {name!r} twice")
            tensors[i] = tensor
        missing = [n for n, t in zip(names, tensors) if t is None]
        if missing:
            raise TypeError(f"{fn.name}() missing argument(s): {', '.join(missing)}")
        return tensors

    def _outputs(self, out, device, shapes):
        """The result tensors: out's where given, else new ones (None for
        a result that is an argument)."""
        fn = self.fn
        given = [None] * len(fn.results)
        if isinstance(out, dict):
            for name, tensor in out.items():
                if name not in fn.result_names:
                    raise TypeError(f"{fn.name}(): out has no result {name!r} (results: "
                                    f"{', '.join(fn.result_names)})")
                given[fn.result_names.index(name)] = tensor
        elif out is not None:
            if len(out) != len(fn.results):
                raise TypeError(f"{fn.name}(): out needs {len(fn.results)} entries "
                                f"({', '.join(fn.result_names)}), got {len(out)}")
            given = list(out)
        for i in self.owned:
            if given[i] is None:
                given[i] = torch.empty(shapes[i], dtype=self.res_dtypes[i], device=device)
        return given

    def __call__(self, args, kwargs, out, stream):
        tensors = self._arguments(args, kwargs)
        device = tensors[0].device
        if device.type != "cuda":
            raise ValueError(f"{self.fn.name}(): argument '{self.fn.argument_names[0]}' "
                             f"must be a CUDA tensor, got one on {device}")
        key = None if self.static else tuple(t.shape for t in tensors)
        plan = self.plans.get(key)
        if plan is not None and stream is None and self._extension is not None:
            # The C++ operators describe the tensors and the runtime checks
            # them (an error names the argument); without `out` they also
            # allocate the results.
            from ._torch_ops import _CALL, _CALL_PLANNED
            try:
                if out is None and plan.results_id(self) is not None:
                    results = _CALL_PLANNED(self._address, plan.results_id(self), tensors,
                                            plan.workspace)
                else:
                    results = self._outputs(out, device, plan.res_shapes)
                    _CALL(self._address, tensors, results, plan.workspace)
            except RuntimeError as error:
                raise RuntimeError(f"call of {self.fn.name}: {error}") from None
            return self._values(tensors, results)
        fast = plan is not None and self._fill(plan.args, tensors, plan.arg_shapes,
                                               self.arg_dtypes)
        if fast:
            results = self._outputs(out, device, plan.res_shapes)
            fast = self._fill(plan.results, results, plan.res_shapes, self.res_dtypes)
        if fast:
            arg_array, res_array, workspace_bytes = plan.args, plan.results, plan.workspace
        else:
            arg_array, res_array, results, workspace_bytes = self._general(tensors, out, device)
        workspace = (torch.empty(workspace_bytes, dtype=torch.uint8, device=device)
                     if workspace_bytes else None)
        index = device.index if device.index is not None else torch.cuda.current_device()
        handle = _runtime.stream_handle(stream) if stream is not None else \
            _current_stream(index)
        if index != torch.cuda.current_device():
            with torch.cuda.device(index):
                status = self._invoke(arg_array, res_array, workspace, workspace_bytes, handle)
        else:
            status = self._invoke(arg_array, res_array, workspace, workspace_bytes, handle)
        if status != _runtime.SUCCESS:
            raise RuntimeError(_runtime._error_message(self.fn._lib, status,
                                                       f"call of {self.fn.name}"))
        if not fast and not self.static and key not in self.plans:
            if len(self.plans) >= _PLANS:
                self.plans.pop(next(iter(self.plans)))
            self.plans[key] = _Plan(self, key, self._shapes_of(tensors), workspace_bytes)
        return self._values(tensors, results)

    def _values(self, tensors, results):
        values = tuple(tensors[r.alias_of] if r.alias_of is not None else results[i]
                       for i, r in enumerate(self.fn.results))
        return values[0] if len(values) == 1 else values

    def _invoke(self, arg_array, res_array, workspace, workspace_bytes, stream):
        return self._call(self._handle, arg_array, len(self.fn.arguments), res_array,
                          len(self.fn.results),
                          workspace.data_ptr() if workspace is not None else None,
                          workspace_bytes, stream or None)

    def _shapes_of(self, tensors):
        """The result shapes for these arguments."""
        symbols = self.fn.bind_symbols([tuple(t.shape) for t in tensors])
        return [tuple(evaluate(e, symbols) for e in r.shape) for r in self.fn.results]

    @staticmethod
    def _fill(array, tensors, shapes, dtypes):
        """Writes the data pointers when every tensor matches the plan's
        description (None: an aliased result, data NULL); False when one
        does not."""
        for slot, tensor, shape, dtype in zip(array, tensors, shapes, dtypes):
            if tensor is None:
                slot.data = None
                continue
            if (tensor.shape != shape or tensor.dtype != dtype or not tensor.is_cuda
                    or not tensor.is_contiguous()):
                return False
            slot.data = tensor.data_ptr() or None
        return True

    def _general(self, tensors, out, device):
        fn = self.fn
        arg_array = (_Array * max(len(tensors), 1))()
        for slot, name, tensor in zip(arg_array, fn.argument_names, tensors):
            _describe(slot, name, tensor)
        size = ctypes.c_size_t()
        status = fn._lib.fp8rt_function_workspace_bytes_for(fn._handle, arg_array,
                                                             len(tensors), ctypes.byref(size))
        if status != _runtime.SUCCESS:  # the arguments are wrong: the runtime says how
            raise RuntimeError(_runtime._error_message(fn._lib, status, f"call of {fn.name}"))
        shapes = self._shapes_of(tensors)
        workspace_bytes = size.value
        results = self._outputs(out, device, shapes)
        res_array = (_Array * max(len(results), 1))()
        for slot, name, tensor in zip(res_array, fn.result_names, results):
            _describe(slot, name, tensor)
        return arg_array, res_array, results, workspace_bytes


_PLANS = 8  # plans kept per function with run-time symbols


class _Plan:
    """The described arrays of one call configuration."""

    def __init__(self, call, arg_shapes, res_shapes, workspace):
        self.arg_shapes = [tuple(s) for s in arg_shapes]
        self.res_shapes = [tuple(s) for s in res_shapes]
        self.args = call._array(call.fn.arguments, self.arg_shapes)
        self.results = call._array(call.fn.results, self.res_shapes)
        self.workspace = workspace
        self._results_id = False  # not registered yet

    def results_id(self, call):
        """The id of this plan's results in the C++ extension (registered
        at the first use), or None when it cannot allocate them."""
        if self._results_id is False:
            results = call.fn.results
            self._results_id = call._extension.register_result_plan(
                [_runtime.DTYPES[r.dtype] for r in results], self.res_shapes,
                [r.alias_of is not None for r in results], _runtime.MAX_RANK)
        return self._results_id
