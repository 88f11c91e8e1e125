-- capslint's language server for Python, YAML, JSON and TOML buffers (Neovim 0.7 and later).
local function start_capslint(buffer)
  local config = {
    name = "capslint",
    cmd = { vim.env.CAPSLINT_BINARY or "capslint", "server" },
    root_dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buffer), ":p:h"),
    init_options = { unsafeFixes = false },
  }
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = buffer })
  else
    vim.lsp.buf_attach_client(buffer, vim.lsp.start_client(config))
  end
end

vim.api.nvim_create_autocmd("FileType", {
  pattern = { "python", "yaml", "json", "toml" },
  callback = function(args)
    start_capslint(args.buf)
  end,
})
