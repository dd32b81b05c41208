/* placeholder: the capability checklist driver is being written */
int main(void)
{
	return 1;
}
