-- bfsync.lua: bfsync kernels (.bfk) in Neovim 0.9+ through `bfsync lsp`
-- (docs/lsp.md): diagnostics, hover (K), go to definition (gd or
-- vim.lsp.buf.definition) and the inserted waits as inlay hints.
-- Install: copy to ~/.config/nvim/plugin/bfsync.lua (with editors/vim for
-- the highlighting). g:bfsync_path names the bfsync command (default
-- "bfsync"), g:bfsync_sync the sync mode of the hints ("barrier-free").
vim.filetype.add({ extension = { bfk = "bfk" } })

vim.api.nvim_create_autocmd("FileType", {
  pattern = "bfk",
  callback = function(args)
    local root = vim.fs.find({ ".git", "Makefile" }, { upward = true, path = vim.fs.dirname(args.file) })[1]
    vim.lsp.start({
      name = "bfsync",
      cmd = { vim.g.bfsync_path or "bfsync", "lsp" },
      root_dir = root and vim.fs.dirname(root) or vim.fs.dirname(args.file),
      init_options = { sync = vim.g.bfsync_sync or "barrier-free" },
    }, { bufnr = args.buf })
    -- inlay hints: the waits before each instruction (Neovim 0.10 has the API)
    if vim.lsp.inlay_hint and vim.lsp.inlay_hint.enable then
      pcall(vim.lsp.inlay_hint.enable, true, { bufnr = args.buf })
    end
  end,
})
