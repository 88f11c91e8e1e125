-- Opens CAPSLINT_FILE in a headless Neovim set up with capslint.lua (beside this script), waits for
-- capslint's diagnostics, and writes them to CAPSLINT_OUT, one per line, sorted: the code and the
-- 0-based start and end (line:column).
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "capslint.lua")
vim.cmd("filetype on")
vim.cmd("edit " .. vim.fn.fnameescape(vim.env.CAPSLINT_FILE))
local buffer = vim.api.nvim_get_current_buf()
local arrived = vim.wait(60000, function()
  return #vim.diagnostic.get(buffer) > 0
end, 20)
local lines = {}
for _, diagnostic in ipairs(vim.diagnostic.get(buffer)) do
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
  local code = diagnostic.code or lsp.code or "?"
  lines[#lines + 1] = string.format(
    "%s %d:%d %d:%d",
    code,
    diagnostic.lnum,
    diagnostic.col,
    diagnostic.end_lnum,
    diagnostic.end_col
  )
end
table.sort(lines)
if not arrived then
  lines = { "TIMEOUT" }
end
vim.fn.writefile(lines, vim.env.CAPSLINT_OUT)
vim.cmd("qall!")
