# kbench's Triton compile step (worker/triton/README.md). Run by the runner in a sandboxed child
# process with a time limit, as `python3 -c <this file> MODE`: it never touches a GPU. Modes:
#   probe    prints {"ok": true, "triton_version": ..., "python_version": ...} or why Triton is absent.
#   compile  reads one request (JSON) on stdin and prints one reply (JSON) on stdout:
#            request {source, file_name, kernel, params: [{name, type, div16}], constexprs: {NAME: int},
#                     num_warps, num_stages, arch}
#            reply   {ok, error, name, shared, num_warps, num_stages, global_scratch_size,
#                     global_scratch_align, profile_scratch_size, profile_scratch_align,
#                     triton_version, cubin (base64), param_names, constexpr_names}
# The kernel's non-constexpr parameters map one for one, in order, onto the contract's parameters
# (`params`: the op's tensors, then its dims as i64); its constexpr parameters take `constexprs`.
import base64
import json
import os
import sys
import traceback


def reply(obj):
    sys.stdout.write(json.dumps(obj))
    sys.stdout.flush()


def probe():
    import platform
    try:
        import triton  # noqa: F401
        from triton.backends.compiler import GPUTarget  # noqa: F401
        from triton.compiler import ASTSource  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        reply({"ok": False, "error": "triton cannot be imported: %s" % str(e).splitlines()[0][:200],
               "python_version": platform.python_version()})
        return
    reply({"ok": True, "triton_version": triton.__version__, "python_version": platform.python_version()})


def user_frames_only(exc, file_name):
    # Triton's message (CompilationError quotes the user's source line); the traceback's frames
    # inside Triton itself say nothing to the kernel's author.
    text = str(exc).strip() or type(exc).__name__
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == file_name]
    where = "".join("%s(%d): in %s\n" % (f.filename, f.lineno, f.name) for f in frames[-3:])
    return "%s%s: %s" % (where, type(exc).__name__, text)


def compile_one(req):
    import inspect
    import linecache
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    file_name = req.get("file_name") or "kernel.py"
    source = req["source"]
    # inspect.getsource (which @triton.jit calls) finds the text through linecache; no file is written.
    linecache.cache[file_name] = (len(source), None, source.splitlines(True), file_name)
    module = {"__name__": "kbench_user_kernel", "__file__": file_name}
    try:
        exec(compile(source, file_name, "exec"), module)
    except Exception as e:
        return {"ok": False, "error": user_frames_only(e, file_name)}
    name = req["kernel"]
    fn = module.get(name)
    if fn is None or not hasattr(fn, "params"):
        jitted = sorted(k for k, v in module.items() if hasattr(v, "params") and hasattr(v, "arg_names"))
        return {"ok": False, "error": "%s: no @triton.jit function '%s' (found: %s)" %
                (file_name, name, ", ".join(jitted) or "none")}
    params = req["params"]
    runtime = [p for p in fn.params if not p.is_constexpr]
    consts = [p for p in fn.params if p.is_constexpr]
    if len(runtime) != len(params):
        return {"ok": False, "error": "%s: '%s' takes %d non-constexpr parameters (%s); the launch contract "
                "passes %d (%s)" % (file_name, name, len(runtime), ", ".join(p.name for p in runtime),
                                    len(params), ", ".join(p["name"] for p in params))}
    constexprs = dict(req.get("constexprs") or {})
    signature, const_values, attrs = {}, {}, {}
    it = iter(params)
    for i, p in enumerate(fn.params):
        if p.is_constexpr:
            signature[p.name] = "constexpr"
            if p.name in constexprs:
                const_values[(i,)] = constexprs.pop(p.name)
            elif p.default is not inspect.Parameter.empty:
                const_values[(i,)] = p.default
            else:
                return {"ok": False, "error": "%s: constexpr '%s' of '%s' has no value: give it in kbench_launch's "
                        "\"constexprs\"" % (file_name, p.name, name)}
            continue
        c = next(it)
        signature[p.name] = c["type"]
        if c.get("div16"):
            attrs[(i,)] = [["tt.divisibility", 16]]
    if constexprs:
        return {"ok": False, "error": "%s: '%s' has no constexpr parameter %s" %
                (file_name, name, ", ".join(sorted(constexprs)))}
    src = ASTSource(fn, signature, constexprs=const_values, attrs=attrs)
    options = {"num_warps": int(req.get("num_warps", 4)), "num_stages": int(req.get("num_stages", 3))}
    try:
        k = triton.compile(src, target=GPUTarget("cuda", int(req["arch"]), 32), options=options)
    except Exception as e:
        return {"ok": False, "error": user_frames_only(e, file_name)}
    md = k.metadata
    get = lambda key, default=0: getattr(md, key, default) or default
    return {
        "ok": True,
        "name": md.name,
        "shared": int(get("shared")),
        "num_warps": int(get("num_warps")),
        "num_stages": int(get("num_stages")),
        "num_ctas": int(get("num_ctas", 1)),
        "global_scratch_size": int(get("global_scratch_size")),
        "global_scratch_align": int(get("global_scratch_align", 1)),
        "profile_scratch_size": int(get("profile_scratch_size")),
        "profile_scratch_align": int(get("profile_scratch_align", 1)),
        "triton_version": triton.__version__,
        "param_names": [p.name for p in runtime],
        "constexpr_names": [p.name for p in consts],
        "cubin": base64.b64encode(k.asm["cubin"]).decode("ascii"),
    }


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "probe":
        return probe()
    if mode != "compile":
        sys.stderr.write("usage: kbench_triton_compile.py probe|compile < request.json\n")
        sys.exit(2)
    # Triton's own cache and ptxas's temporary files go to the private directory it runs in.
    here = os.getcwd()
    os.environ["TRITON_CACHE_DIR"] = os.path.join(here, "triton-cache")
    os.environ["TMPDIR"] = here
    import tempfile
    tempfile.tempdir = here
    req = json.loads(sys.stdin.read())
    try:
        reply(compile_one(req))
    except Exception as e:  # anything unforeseen still comes back as the compile's message
        reply({"ok": False, "error": "kbench_triton_compile: %s: %s" % (type(e).__name__, str(e)[:2000])})


main()
