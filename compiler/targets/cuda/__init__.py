"""The CUDA target: its stage table (table.py), the passes only it runs, PTX and cubin emission
(gpu_binary.py) and finding ptxas (cuda_tools.py, importable without MLIR)."""
