func.func @nothing() {
  return
}
