au BufRead,BufNewFile *.bfk setfiletype bfk
