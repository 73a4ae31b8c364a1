# Prints the JSON Schema of llm-d-benchmark's benchmark report classes
# (schema_v0_1.py, schema_v0_2.py) as core.make_json_schema does:
# json.dumps(<class>.model_json_schema(), indent=2). The package's
# __init__ and core import numpy, which is not needed for the schema, so
# the schema modules are loaded on their own under a stand-in package.
import importlib.util, json, sys, types
d = sys.argv[1]
pkg = types.ModuleType("br"); pkg.__path__ = [d]; sys.modules["br"] = pkg
def load(name):
    spec = importlib.util.spec_from_file_location("br." + name, f"{d}/{name}.py")
    m = importlib.util.module_from_spec(spec); sys.modules["br." + name] = m; spec.loader.exec_module(m); return m
load("base")
cls = {"0.1": ("schema_v0_1", "BenchmarkReportV01"), "0.2": ("schema_v0_2", "BenchmarkReportV02")}[sys.argv[2]]
if cls[0] == "schema_v0_2":
    load("schema_v0_2_components")
m = load(cls[0])
print(json.dumps(getattr(m, cls[1]).model_json_schema(), indent=2))
