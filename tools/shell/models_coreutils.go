package shell

// Models of GNU coreutils and util-linux programs, from their `--help`
// (coreutils 9.1, util-linux 2.38 on Debian 12) and the GNU coreutils
// manual. Options are listed as getopt_long sees them: a short option
// whose long twin takes an optional value takes none itself and is
// written "X@long". "help" and "version" are kept: they print and exit.

var (
	gnuInfo = []string{"help", "version"}
)

func gnu(name string, specs ...string) *Model {
	return newModel(name, true, append(specs, gnuInfo...)...)
}

func initCoreutilsModels() {
	register(gnu("cat", "A,show-all", "b,number-nonblank", "e", "E,show-ends", "n,number", "s,squeeze-blank",
		"t", "T,show-tabs", "u", "v,show-nonprinting"))
	head := register(gnu("head", "c,bytes=", "n,lines=", "q,quiet,silent", "v,verbose", "z,zero-terminated"))
	head.numeric, head.numericWord = "--lines", true
	tail := register(gnu("tail", "c,bytes=", "f,follow?", "F", "n,lines=", "max-unchanged-stats=", "pid=",
		"q,quiet,silent", "retry", "s,sleep-interval=", "v,verbose", "z,zero-terminated"))
	tail.short['f'] = &modelOpt{canon: "--follow", arg: ArgNone}
	tail.numeric, tail.numericWord = "--lines", true
	register(gnu("wc", "c,bytes", "m,chars", "l,lines", "files0-from=:l", "L,max-line-length", "w,words", "total="))
	register(gnu("tac", "b,before", "r,regex", "s,separator="))
	register(gnu("nl", "b,body-numbering=", "d,section-delimiter=", "f,footer-numbering=", "h,header-numbering=",
		"i,line-increment=", "l,join-blank-lines=", "n,number-format=", "p,no-renumber", "s,number-separator=",
		"v,starting-line-number=", "w,number-width="))
	register(gnu("od", "A,address-radix=", "endian=", "j,skip-bytes=", "N,read-bytes=", "S=@strings", "strings?",
		"t,format=", "v,output-duplicates", "w,width?", "traditional", "a", "b", "c", "d", "f", "i", "l", "o", "s", "x"))
	register(gnu("fold", "b,bytes", "s,spaces", "w,width="))
	register(gnu("expand", "i,initial", "t,tabs="))
	register(gnu("unexpand", "a,all", "first-only", "t,tabs="))
	register(gnu("cut", "b,bytes=", "c,characters=", "d,delimiter=", "f,fields=", "n", "complement",
		"s,only-delimited", "output-delimiter=", "z,zero-terminated"))
	register(gnu("tr", "c,C,complement", "d,delete", "s,squeeze-repeats", "t,truncate-set1"))
	register(gnu("paste", "d,delimiters=", "s,serial", "z,zero-terminated"))
	register(gnu("join", "a=", "e=", "i,ignore-case", "j=", "o=", "t=", "v=", "1=", "2=", "check-order",
		"nocheck-order", "header", "z,zero-terminated"))
	register(gnu("comm", "1", "2", "3", "check-order", "nocheck-order", "output-delimiter=", "total", "z,zero-terminated"))
	register(gnu("cmp", "b,print-bytes", "i,ignore-initial=", "l,verbose", "n,bytes=", "s,quiet,silent", "v@version"))
	register(gnu("diff", "normal", "q,brief", "s,report-identical-files", "c@context", "C=@context", "context?",
		"u@unified", "U=@unified", "unified?", "e,ed", "n,rcs", "y,side-by-side", "W,width=", "left-column",
		"suppress-common-lines", "p,show-c-function", "F,show-function-line=", "label=", "t,expand-tabs",
		"T,initial-tab", "tabsize=", "suppress-blank-empty", "l,paginate:x", "r,recursive", "no-dereference",
		"N,new-file", "unidirectional-new-file", "ignore-file-name-case", "no-ignore-file-name-case",
		"x,exclude=", "X,exclude-from=:r", "S,starting-file=", "from-file=:r", "to-file=:r", "i,ignore-case",
		"E,ignore-tab-expansion", "Z,ignore-trailing-space", "b,ignore-space-change", "w,ignore-all-space",
		"B,ignore-blank-lines", "I,ignore-matching-lines=", "a,text", "strip-trailing-cr", "D,ifdef=",
		"old-group-format=", "new-group-format=", "unchanged-group-format=", "changed-group-format=",
		"line-format=", "old-line-format=", "new-line-format=", "unchanged-line-format=", "d,minimal",
		"horizon-lines=", "speed-large-files", "color?", "palette=", "v@version"))
	for _, s := range []string{"md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum"} {
		register(gnu(s, "b,binary", "c,check", "tag", "t,text", "z,zero", "ignore-missing", "quiet", "status", "strict", "w,warn"))
	}
	register(gnu("b2sum", "b,binary", "c,check", "l,length=", "tag", "t,text", "z,zero", "ignore-missing", "quiet",
		"status", "strict", "w,warn"))
	register(gnu("cksum", "a,algorithm=", "base64", "c,check", "l,length=", "raw", "tag", "untagged", "z,zero",
		"ignore-missing", "quiet", "status", "strict", "w,warn", "debug"))
	register(gnu("base64", "d,decode", "i,ignore-garbage", "w,wrap="))
	register(gnu("base32", "d,decode", "i,ignore-garbage", "w,wrap="))
	register(gnu("basename", "a,multiple", "s,suffix=", "z,zero"))
	register(gnu("dirname", "z,zero"))
	register(gnu("realpath", "e,canonicalize-existing", "m,canonicalize-missing", "L,logical", "P,physical",
		"q,quiet", "relative-to=", "relative-base=", "s,strip,no-symlinks", "z,zero"))
	register(gnu("readlink", "f,canonicalize", "e,canonicalize-existing", "m,canonicalize-missing",
		"n,no-newline", "q,quiet", "s,silent", "v,verbose", "z,zero"))
	register(gnu("stat", "L,dereference", "f,file-system", "cached=", "c=@format", "format=", "printf=", "t,terse"))
	register(gnu("du", "0,null", "a,all", "apparent-size", "B,block-size=", "b,bytes", "c,total",
		"D,H,dereference-args", "d,max-depth=", "files0-from=:l", "h,human-readable", "inodes", "k",
		"L,dereference", "l,count-links", "m", "P,no-dereference", "S,separate-dirs", "si", "s,summarize",
		"t,threshold=", "time?", "time-style=", "X,exclude-from=:r", "exclude=", "x,one-file-system"))
	register(gnu("df", "a,all", "B,block-size=", "h,human-readable", "H,si", "i,inodes", "k", "l,local",
		"no-sync", "output?", "P,portability", "sync", "total", "t,type=", "T,print-type", "x,exclude-type=", "v"))
	register(gnu("ls", "a,all", "A,almost-all", "author", "b,escape", "block-size=", "B,ignore-backups", "c", "C",
		"color,colour?", "d,directory", "D,dired", "f", "F@classify", "classify?", "file-type", "format=", "full-time",
		"g", "group-directories-first", "G,no-group", "h,human-readable", "si", "H,dereference-command-line",
		"dereference-command-line-symlink-to-dir", "hide=", "hyperlink?", "indicator-style=", "i,inode",
		"I,ignore=", "k,kibibytes", "l", "L,dereference", "m", "n,numeric-uid-gid", "N,literal", "o", "p",
		"q,hide-control-chars", "show-control-chars", "Q,quote-name", "quoting-style=", "r,reverse",
		"R,recursive", "s,size", "S", "sort=", "time=", "time-style=", "t", "T,tabsize=", "u", "U", "v",
		"w,width=", "x", "X", "Z,context", "zero", "1"), "dir", "vdir")
	register(gnu("seq", "f,format=", "s,separator=", "w,equal-width"))
	register(gnu("sleep"))
	register(gnu("numfmt", "debug", "d,delimiter=", "field=", "format=", "from=", "from-unit=", "grouping",
		"header?", "invalid=", "padding=", "round=", "suffix=", "to=", "to-unit=", "z,zero-terminated"))
	register(gnu("sort", "b,ignore-leading-blanks", "d,dictionary-order", "f,ignore-case",
		"g,general-numeric-sort", "i,ignore-nonprinting", "M,month-sort", "h,human-numeric-sort",
		"n,numeric-sort", "R,random-sort", "random-source=:r", "r,reverse", "sort=", "V,version-sort",
		"batch-size=", "check?", "c@check", "C@check", "compress-program=:x", "debug", "files0-from=:l",
		"k,key=", "m,merge", "o,output=:w", "s,stable", "S,buffer-size=", "t,field-separator=",
		"T,temporary-directory=:d", "parallel=", "u,unique", "z,zero-terminated"))
	register(gnu("uniq", "c,count", "d,repeated", "D", "all-repeated?", "f,skip-fields=", "group?", "i,ignore-case",
		"s,skip-chars=", "u,unique", "z,zero-terminated", "w,check-chars="))
	register(gnu("date", "d,date=", "debug", "f,file=:r", "I,iso-8601?", "resolution", "R,rfc-email", "rfc-3339=",
		"r,reference=:m", "s,set=:W", "u,utc,universal"))
	register(gnu("id", "a", "Z,context", "g,group", "G,groups", "n,name", "r,real", "u,user", "z,zero"))
	register(gnu("uname", "a,all", "s,kernel-name", "n,nodename", "r,kernel-release", "v,kernel-version",
		"m,machine", "p,processor", "i,hardware-platform", "o,operating-system"))
	for _, s := range []string{"whoami", "groups", "users", "arch", "logname", "hostid"} {
		register(gnu(s))
	}
	register(gnu("nproc", "all", "ignore="))
	register(gnu("tty", "s,silent,quiet"))
	register(gnu("printenv", "0,null"))
	register(gnu("who", "a,all", "b,boot", "d,dead", "H,heading", "ips", "l,login", "lookup", "m", "p,process",
		"q,count", "r,runlevel", "s,short", "t,time", "T,w,mesg,message,writable", "u,users"))
	yes := register(gnu("yes"))
	yes.permute = false
	register(gnu("truncate", "c,no-create", "o,io-blocks", "r,reference=:m", "s,size="))
	register(gnu("touch", "a", "c,no-create", "d,date=", "f", "h,no-dereference", "m", "r,reference=:m", "t=", "time="))
	register(gnu("mkdir", "m,mode=", "p,parents", "v,verbose", "Z@context", "context?"))
	register(gnu("rmdir", "ignore-fail-on-non-empty", "p,parents", "v,verbose"))
	register(gnu("rm", "f,force", "i", "I", "interactive?", "one-file-system", "no-preserve-root",
		"preserve-root?", "r,R,recursive", "d,dir", "v,verbose"))
	register(gnu("unlink"))
	register(gnu("shred", "f,force", "n,iterations=", "random-source=:r", "s,size=", "u", "remove?", "v,verbose",
		"x,exact", "z,zero"))
	register(gnu("cp", "a,archive", "attributes-only", "backup?", "b", "copy-contents", "d", "debug", "f,force",
		"i,interactive", "H", "l,link", "L,dereference", "n,no-clobber", "P,no-dereference", "p", "preserve?",
		"no-preserve=", "parents", "R,r,recursive", "reflink?", "remove-destination", "sparse=",
		"strip-trailing-slashes", "s,symbolic-link", "S,suffix=", "t,target-directory=", "T,no-target-directory",
		"u,update?", "v,verbose", "x,one-file-system", "Z@context", "context?", "keep-directory-symlink"))
	register(gnu("mv", "backup?", "b", "debug", "exchange", "f,force", "i,interactive", "n,no-clobber",
		"no-copy", "strip-trailing-slashes", "S,suffix=", "t,target-directory=", "T,no-target-directory",
		"u,update?", "v,verbose", "Z,context"))
	register(gnu("ln", "backup?", "b", "d,F,directory", "f,force", "i,interactive", "L,logical",
		"n,no-dereference", "P,physical", "r,relative", "s,symbolic", "S,suffix=", "t,target-directory=",
		"T,no-target-directory", "v,verbose"))
	register(gnu("install", "backup?", "b", "c", "C,compare", "d,directory", "D", "debug", "g,group=", "m,mode=",
		"o,owner=", "p,preserve-timestamps", "s,strip", "strip-program=:x", "S,suffix=", "t,target-directory=",
		"T,no-target-directory", "v,verbose", "preserve-context", "Z@context", "context?"))
	register(gnu("tee", "a,append", "i,ignore-interrupts", "p", "output-error?"))
	register(gnu("chmod", "c,changes", "f,silent,quiet", "v,verbose", "no-preserve-root", "preserve-root",
		"reference=:m", "R,recursive"))
	for _, s := range []string{"chown", "chgrp"} {
		register(gnu(s, "c,changes", "f,silent,quiet", "v,verbose", "dereference", "h,no-dereference", "from=",
			"no-preserve-root", "preserve-root", "reference=:m", "R,recursive", "H", "L", "P"))
	}
	// Wrappers: their options end at the command they run.
	wrap := func(name string, specs ...string) *Model {
		m := gnu(name, specs...)
		m.permute = false
		return register(m)
	}
	wrap("env", "i,ignore-environment", "0,null", "u,unset=", "C,chdir=:c", "S,split-string=:x",
		"block-signal?", "default-signal?", "ignore-signal?", "list-signal-handling", "v,debug", "a,argv0=")
	wrap("timeout", "preserve-status", "foreground", "k,kill-after=", "s,signal=", "v,verbose")
	nice := wrap("nice", "n,adjustment=")
	nice.numeric, nice.numericWord = "--adjustment", true
	wrap("nohup")
	wrap("stdbuf", "i,input=", "o,output=", "e,error=")
	wrap("chroot", "groups=", "userspec=", "skip-chdir")
	wrap("xargs", "0,null", "a,arg-file=:l", "d,delimiter=", "E=", "e,eof?", "I=", "i,replace?",
		"L,max-lines=", "l?", "n,max-args=", "o,open-tty", "P,max-procs=", "p,interactive",
		"process-slot-var=", "r,no-run-if-empty", "s,max-chars=", "show-limits", "t,verbose", "x,exit")
	// util-linux.
	wrap("setsid", "c,ctty", "f,fork", "w,wait", "h@help", "V@version")
	wrap("flock", "s,shared", "x,e,exclusive", "u,unlock", "n,nb,nonblock", "w,wait,timeout=",
		"E,conflict-exit-code=", "o,close", "c,command=:x", "F,no-fork", "verbose", "h@help", "V@version")
	wrap("script", "I,log-in=:w", "O,log-out=:w", "B,log-io=:w", "T,log-timing=:w", "t@timing", "timing?:w",
		"m,logging-format=", "a,append", "c,command=:x", "e,return", "f,flush", "force", "E,echo=",
		"o,output-limit=", "q,quiet", "h@help", "V@version")
	wrap("ionice", "c,class=", "n,classdata=", "p,pid", "P,pgid", "t,ignore", "u,uid", "h@help", "V@version")
	wrap("chrt", "b,batch", "d,deadline", "f,fifo", "i,idle", "o,other", "r,rr", "R,reset-on-fork",
		"T,sched-runtime=", "P,sched-period=", "D,sched-deadline=", "a,all-tasks", "m,max", "p,pid",
		"v,verbose", "h@help", "V@version")
	wrap("taskset", "a,all-tasks", "p,pid", "c,cpu-list", "h@help", "V@version")
	wrap("su", "m,p,preserve-environment", "w,whitelist-environment=", "g,group=", "G,supp-group=", "l,login",
		"c,command=:x", "session-command=:x", "f,fast", "s,shell=:x", "P,pty", "h@help", "V@version")
	wrap("runuser", "u,user=", "m,p,preserve-environment", "w,whitelist-environment=", "g,group=",
		"G,supp-group=", "l,login", "c,command=:x", "session-command=:x", "f,fast", "s,shell=:x", "P,pty",
		"h@help", "V@version")
	// procps watch runs its command through sh -c unless -x.
	wrap("watch", "b,beep", "c,color", "C,no-color", "d,differences?", "e,errexit", "g,chgexit",
		"q,equexit=", "n,interval=", "p,precise", "r,no-rerun", "t,no-title", "w,no-wrap", "x,exec",
		"h@help", "v@version")
	// sudo(8) 1.9: -h alone is help; --host takes a value.
	wrap("sudo", "A,askpass", "B,bell", "b,background", "C,close-from=", "D,chdir=:c", "E@preserve-env",
		"preserve-env?", "e,edit:W", "g,group=", "H,set-home", "host=", "h@help", "i,login", "K,remove-timestamp",
		"k,reset-timestamp", "l,list", "N,no-update", "n,non-interactive", "P,preserve-groups", "p,prompt=",
		"R,chroot=", "r,role=", "S,stdin", "s,shell", "T,command-timeout=", "t,type=", "U,other-user=",
		"u,user=", "V@version", "v,validate")
	models["doas"] = newModel("doas", false, "n", "s", "u=", "C=", "L")
	register(gnu("rev", "0,zero", "h@help", "V@version"))
	register(gnu("look", "a,alternative", "d,alphanum", "f,ignore-case", "t,terminate=", "h@help", "V@version"))
	register(gnu("column", "t,table", "n,table-name=", "O,table-order=", "N,table-columns=", "l,table-columns-limit=",
		"E,table-noextreme=", "d,table-noheadings", "e,table-header-repeat", "H,table-hide=", "R,table-right=",
		"T,table-truncate=", "W,table-wrap=", "L,keep-empty-lines", "J,json", "r,tree=", "i,tree-id=",
		"p,tree-parent=", "c,output-width=", "o,output-separator=", "s,separator=", "x,fillrows", "h@help", "V@version"))
	register(gnu("hexdump", "b,one-byte-octal", "c,one-byte-char", "C,canonical", "d,two-bytes-decimal",
		"o,two-bytes-octal", "x,two-bytes-hex", "L@color", "color?", "e,format=", "f,format-file=:r",
		"n,length=", "s,skip=", "v,no-squeezing", "h@help", "V@version"))
	register(gnu("lsblk", "A,noempty", "D,discard", "E,dedup=", "I,include=", "J,json", "M,merge", "O,output-all",
		"P,pairs", "S,scsi", "T@tree", "tree?", "a,all", "b,bytes", "d,nodeps", "e,exclude=", "f,fs", "i,ascii",
		"l,list", "m,perms", "n,noheadings", "o,output=", "p,paths", "r,raw", "s,inverse", "t,topology",
		"w,width=", "x,sort=", "y,shell", "z,zoned", "sysroot=", "h@help", "V@version"))
	// procps.
	register(gnu("free", "b,bytes", "kilo", "mega", "giga", "tera", "peta", "k,kibi", "m,mebi", "g,gibi", "tebi",
		"pebi", "h,human", "si", "l,lohi", "t,total", "v,committed", "s,seconds=", "c,count=", "w,wide", "V@version"))
	register(gnu("uptime", "p,pretty", "s,since", "h@help", "V@version"))
	register(gnu("pgrep", "d,delimiter=", "l,list-name", "a,list-full", "v,inverse", "w,lightweight", "c,count",
		"f,full", "g,pgroup=", "G,group=", "i,ignore-case", "n,newest", "o,oldest", "O,older=", "P,parent=",
		"s,session=", "t,terminal=", "u,euid=", "U,uid=", "x,exact", "F,pidfile=:r", "L,logpidfile",
		"r,runstates=", "A,ignore-ancestors", "cgroup=", "ns=", "nslist=", "h@help", "V@version"))
	// binutils strings: digits are `-n NUM`.
	str := register(gnu("strings", "a,all", "d,data", "f,print-file-name", "n,bytes=", "t,radix=",
		"w,include-all-whitespace", "o", "T,target=", "e,encoding=", "unicode=", "U=@unicode",
		"s,output-separator=", "h@help", "v,V@version"))
	str.numeric = "--bytes"
	// file(1) runs no program (it may sandbox itself); -m names magic
	// files, -f a list of files to examine.
	register(gnu("file", "v@version", "m,magic-file=:r", "z,uncompress", "Z,uncompress-noreport", "b,brief",
		"c,checking-printout", "e,exclude=", "exclude-quiet=", "f,files-from=:l", "F,separator=", "i,mime",
		"apple", "extension", "mime-type", "mime-encoding", "k,keep-going", "l,list", "L,dereference",
		"h,no-dereference", "n,no-buffer", "N,no-pad", "0,print0", "p,preserve-date", "P,parameter=", "r,raw",
		"s,special-files", "S,no-sandbox", "C,compile:W", "d,debug"))
	register(newModel("which", false, "a"))
	register(newModel("locale", true, "a,all-locales", "m,charmaps", "c,category-name", "k,keyword-name",
		"v,verbose", "help", "usage", "V,version"))
	register(newModel("getconf", false, "v=", "a"))
	register(newModel("hostname", true, "a,alias", "A,all-fqdns", "b,boot", "d,domain", "f,fqdn,long", "F,file=:r",
		"i,ip-address", "I,all-ip-addresses", "s,short", "y,yp,nis", "h,help", "V,version"))
}
