// fp8rt_launch_ordered: the launch path for callers that launch the same
// kernel many times (framework integrations), with nothing per call that
// does not depend on the call.
//
// Operands come in metadata order, so there is no name lookup. The full
// validation of fp8rt_launch (bindLaunchArguments) runs once per
// configuration: the context and, per operand, its presence, dtype, rank,
// shape and strides. Its result (the bound arguments, the launch variant
// for that M and the grid) is kept as an OrderedPlan. A later launch with
// the same configuration only re-checks what depends on the operands'
// addresses (checkOperandAddresses) and puts the new addresses into the
// plan's arguments; the tensor maps whose address changed are patched
// (cuTensorMapReplaceAddress) or re-encoded by launchBound.
//
// This is the same validation: every check of bindLaunchArguments is a
// function of the configuration and the metadata, except those of
// checkOperandAddresses, which runs on every launch.
#include "Kernel.h"

#include <algorithm>
#include <cstring>

namespace fp8rt {

namespace {

bool planMatches(const OrderedPlan &plan, CUcontext context,
                 const fp8rt_tensor *operands) {
  if (plan.context != context)
    return false;
  for (size_t i = 0; i < plan.key.size(); ++i)
    if (!plan.key[i].matches(operands[i]))
      return false;
  return true;
}

// Validates `operands` fully and plans their launch in `context`.
Status createPlan(fp8rt_kernel &kernel, const DriverApi &api,
                  CUcontext context, const fp8rt_tensor *operands,
                  std::unique_ptr<OrderedPlan> &out) {
  const KernelMetadata &meta = kernel.meta;
  // fp8rt_launch's operands: the present ones, named by the metadata.
  std::vector<fp8rt_tensor> named;
  named.reserve(meta.operands.size());
  for (size_t i = 0; i < meta.operands.size(); ++i) {
    if (!operands[i].data && meta.operands[i].optional)
      continue; // an absent optional operand
    named.push_back(operands[i]);
    named.back().name = meta.operands[i].name.c_str();
  }
  auto plan = std::make_unique<OrderedPlan>();
  plan->context = context;
  plan->key.resize(meta.operands.size());
  for (size_t i = 0; i < meta.operands.size(); ++i)
    plan->key[i].assign(operands[i]);
  FP8RT_RETURN_IF_ERROR(bindLaunchArguments(
      meta, named.data(), static_cast<int>(named.size()), plan->args));

  ContextState *state = nullptr;
  FP8RT_RETURN_IF_ERROR(contextStateFor(kernel, api, context, state));
  plan->target = &kernel;
  if (size_t chosen = chooseLaunchVariant(kernel, plan->args, *state)) {
    fp8rt_kernel &variant = *kernel.variants[chosen - 1];
    FP8RT_RETURN_IF_ERROR(bindLaunchArguments(variant.meta, named.data(),
                                              static_cast<int>(named.size()),
                                              plan->args));
    std::lock_guard<std::mutex> lock(variant.mutex);
    FP8RT_RETURN_IF_ERROR(claimDriver(variant, api));
    FP8RT_RETURN_IF_ERROR(contextStateFor(variant, api, context, state));
    plan->target = &variant;
  }
  plan->state = state;
  FP8RT_RETURN_IF_ERROR(computeGrid(plan->target->meta, plan->args,
                                    contextSMs(*state), plan->grid));
  out = std::move(plan);
  return Status();
}

// The plan for this configuration, most recently used first: found, or
// created (evicting the least recently used beyond kOrderedPlans). A found
// plan's addresses are checked and updated.
Status planFor(fp8rt_kernel &kernel, const DriverApi &api, CUcontext context,
               const fp8rt_tensor *operands, OrderedPlan *&out) {
  auto &plans = kernel.orderedPlans;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!planMatches(*plans[i], context, operands))
      continue;
    std::rotate(plans.begin(), plans.begin() + i, plans.begin() + i + 1);
    OrderedPlan &plan = *plans.front();
    // Only the addresses can differ from the plan's last launch.
    bool moved = false;
    for (size_t k = 0; k < plan.args.operands.size(); ++k) {
      BoundOperand &bound = plan.args.operands[k];
      CUdeviceptr address = reinterpret_cast<uintptr_t>(operands[k].data);
      moved = moved || (bound.present && bound.address != address);
      bound.address = address;
    }
    if (moved) {
      Status checked = checkOperandAddresses(plan.target->meta, plan.args);
      if (!checked.ok()) {
        // Forget the rejected addresses: the next launch is checked again
        // whatever its addresses are.
        for (BoundOperand &bound : plan.args.operands)
          bound.address = 0;
        return checked;
      }
      const KernelMetadata &meta = plan.target->meta;
      for (size_t m = 0; m < meta.tensorMaps.size(); ++m)
        if (meta.tensorMaps[m].usedByParam)
          plan.args.tensorMaps[m].address = reinterpret_cast<void *>(
              plan.args.operands[meta.tensorMaps[m].operand].address);
    }
    out = &plan;
    return Status();
  }
  std::unique_ptr<OrderedPlan> plan;
  FP8RT_RETURN_IF_ERROR(createPlan(kernel, api, context, operands, plan));
  if (plans.size() >= kOrderedPlans)
    plans.pop_back();
  plans.insert(plans.begin(), std::move(plan));
  out = plans.front().get();
  return Status();
}

} // namespace

Status launchKernelOrdered(fp8rt_kernel &kernel, const fp8rt_tensor *operands,
                           int numOperands, CUstream stream) {
  const KernelMetadata &meta = kernel.meta;
  if (numOperands != static_cast<int>(meta.operands.size()))
    return invalidArgument("num_operands is ", numOperands,
                           ", but the kernel has ", meta.operands.size(),
                           " operands (fp8rt_launch_ordered takes one per "
                           "operand, in metadata order)");
  if (!operands)
    return invalidArgument("operands is NULL");
  std::unique_lock<std::mutex> lock;
  const DriverApi *api = nullptr;
  CUcontext context = nullptr;
  FP8RT_RETURN_IF_ERROR(enterLaunch(kernel, lock, api, context));
  OrderedPlan *plan = nullptr;
  FP8RT_RETURN_IF_ERROR(planFor(kernel, *api, context, operands, plan));
  if (plan->target == &kernel)
    return launchBound(kernel, *api, *plan->state, plan->args, plan->grid,
                       stream);
  // A launch variant: its own encodings and buffers, under its own mutex
  // (always taken after its kernel's, never before).
  std::lock_guard<std::mutex> variantLock(plan->target->mutex);
  return launchBound(*plan->target, *api, *plan->state, plan->args,
                     plan->grid, stream);
}

} // namespace fp8rt
